import { Migration } from '@mikro-orm/migrations';

/**
 * Who pays a gateway's fee. `merchant` (the default, and what every gateway did
 * before): the customer sends the amount. `customer`: the customer sends amount
 * + fee. Each transaction keeps the amount its SMS must carry (`sms_amount`),
 * fixed when the transaction starts, so a later change of the gateway's setting
 * never changes what an already-told customer is matched against. Old rows get
 * their amount (merchant pays). The open-by-amount index used by SMS matching
 * moves to the new column, which is what the matcher now looks up.
 */
export class Migration0018CheckoutFeePayer extends Migration {
  override name = '0018-checkout-fee-payer';

  override up(): void {
    this.addSql("ALTER TABLE gateways ADD COLUMN fee_payer text NOT NULL DEFAULT 'merchant' CHECK (fee_payer IN ('merchant', 'customer'))");
    this.addSql('ALTER TABLE transactions ADD COLUMN sms_amount numeric(14,2)');
    this.addSql('UPDATE transactions SET sms_amount = amount');
    this.addSql('ALTER TABLE transactions ALTER COLUMN sms_amount SET NOT NULL');
    this.addSql('ALTER TABLE transactions ADD CONSTRAINT transactions_sms_amount_check CHECK (sms_amount = amount OR sms_amount = amount + fee)');
    this.addSql('DROP INDEX transactions_open_by_amount_idx');
    this.addSql("CREATE INDEX transactions_open_by_sms_amount_idx ON transactions (brand_id, sms_amount) WHERE status IN ('pending', 'awaiting_verification')");
  }

  override down(): void {
    this.addSql('DROP INDEX transactions_open_by_sms_amount_idx');
    this.addSql("CREATE INDEX transactions_open_by_amount_idx ON transactions (brand_id, amount) WHERE status IN ('pending', 'awaiting_verification')");
    this.addSql('ALTER TABLE transactions DROP COLUMN sms_amount');
    this.addSql('ALTER TABLE gateways DROP COLUMN fee_payer');
  }
}
