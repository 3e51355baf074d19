import { Migration } from '@mikro-orm/migrations';

/**
 * Who pays a gateway's fee. `merchant` (the default, and what every gateway did
 * before): the customer sends the amount. `customer`: the customer sends amount
 * + fee. Each transaction keeps the amount its SMS must carry (`sms_amount`),
 * fixed when the transaction starts, so a later change of the gateway's setting
 * never changes what an already-told customer is matched against. Old rows get
 * their amount (merchant pays). The open-by-amount index used by SMS matching
 * moves to the new column, which is what the matcher now looks up.
 *
 * Payment links: a brand's shareable link (fixed or customer-entered amount,
 * single use or reusable, optional expiry) that creates a payment intent per
 * visit; each intent remembers its link. `public_id` is the unguessable id in
 * the URL. Single use is enforced under a row lock on the link
 * (domain/payment-links/visit.ts), not by a constraint: a payment that expired
 * or was never paid frees the link again.
 */
export class Migration0018CheckoutFeePayer extends Migration {
  override name = '0018-checkout-fee-payer';

  override up(): void {
    this.addSql("ALTER TABLE gateways ADD COLUMN fee_payer text NOT NULL DEFAULT 'merchant' CHECK (fee_payer IN ('merchant', 'customer'))");
    this.addSql('ALTER TABLE transactions ADD COLUMN sms_amount numeric(14,2)');
    this.addSql('UPDATE transactions SET sms_amount = amount');
    this.addSql('ALTER TABLE transactions ALTER COLUMN sms_amount SET NOT NULL');
    // A writer that does not know the column (seeding scripts, older code during
    // a rolling deploy) inserts what was true before: the customer sends the amount.
    this.addSql(`CREATE FUNCTION transactions_default_sms_amount() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.sms_amount IS NULL THEN NEW.sms_amount := NEW.amount; END IF;
        RETURN NEW;
      END $$`);
    this.addSql('CREATE TRIGGER transactions_default_sms_amount BEFORE INSERT ON transactions FOR EACH ROW EXECUTE FUNCTION transactions_default_sms_amount()');
    this.addSql('ALTER TABLE transactions ADD CONSTRAINT transactions_sms_amount_check CHECK (sms_amount = amount OR sms_amount = amount + fee)');
    this.addSql('DROP INDEX transactions_open_by_amount_idx');
    this.addSql(`CREATE TABLE payment_links (
      id bigserial PRIMARY KEY,
      public_id varchar(40) NOT NULL UNIQUE,
      brand_id bigint NOT NULL REFERENCES brands(id),
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      amount numeric(14,2) CHECK (amount > 0),
      min_amount numeric(14,2) CHECK (min_amount > 0),
      max_amount numeric(14,2) CHECK (max_amount > 0),
      currency varchar(3) NOT NULL,
      single_use boolean NOT NULL DEFAULT false,
      expires_at timestamptz,
      reference varchar(255),
      description varchar(500),
      success_url text,
      cancel_url text,
      active boolean NOT NULL DEFAULT true,
      payments_created integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (amount IS NULL OR (min_amount IS NULL AND max_amount IS NULL)),
      CHECK (min_amount IS NULL OR max_amount IS NULL OR min_amount <= max_amount)
    )`);
    this.addSql('CREATE INDEX payment_links_brand_idx ON payment_links (brand_id, mode, id DESC)');
    this.addSql('ALTER TABLE payment_intents ADD COLUMN payment_link_id bigint REFERENCES payment_links(id)');
    this.addSql('CREATE INDEX payment_intents_link_idx ON payment_intents (payment_link_id, id DESC) WHERE payment_link_id IS NOT NULL');
    this.addSql("CREATE INDEX transactions_open_by_sms_amount_idx ON transactions (brand_id, sms_amount) WHERE status IN ('pending', 'awaiting_verification')");
  }

  override down(): void {
    this.addSql('ALTER TABLE payment_intents DROP COLUMN payment_link_id');
    this.addSql('DROP TABLE payment_links');
    this.addSql('DROP INDEX transactions_open_by_sms_amount_idx');
    this.addSql("CREATE INDEX transactions_open_by_amount_idx ON transactions (brand_id, amount) WHERE status IN ('pending', 'awaiting_verification')");
    this.addSql('DROP TRIGGER transactions_default_sms_amount ON transactions');
    this.addSql('DROP FUNCTION transactions_default_sms_amount()');
    this.addSql('ALTER TABLE transactions DROP COLUMN sms_amount');
    this.addSql('ALTER TABLE gateways DROP COLUMN fee_payer');
  }
}
