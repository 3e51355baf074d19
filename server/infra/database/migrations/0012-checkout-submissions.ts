import { Migration } from '@mikro-orm/migrations';

/**
 * Checkout submissions of manual-gateway transaction ids (SECURITY.md, "Hosted
 * checkout").
 *
 * Claims become per brand. The old index made a claim global across brands, so
 * any brand's checkout answered GATEWAY_TRX_ID_TAKEN for an id another brand's
 * customer had typed (an oracle on other merchants' payments, and a way to
 * block their customers by typing an id first). Now a claim is unique within
 * one brand and gateway (same name, so the error mapping stays), and the rule
 * that matters, one gateway transaction completes one payment ever, is its own
 * index over completed transactions. A completed transaction never changes
 * status again, so that index holds for good.
 *
 * `checkout_submission_counts`: per payment, how many times its customer
 * replaced a submitted id and how many times the checkout answered that an id
 * is taken. Both are bounded (server/domain/checkout/limits.ts); counted here
 * so the bound holds across processes and restarts.
 */
export class Migration0012CheckoutSubmissions extends Migration {
  override name = '0012-checkout-submissions';

  override up(): void {
    this.addSql('DROP INDEX transactions_gateway_trx_id_uniq');
    this.addSql(
      'CREATE UNIQUE INDEX transactions_gateway_trx_id_uniq ON transactions (brand_id, gateway_id, upper(gateway_trx_id)) WHERE gateway_trx_id IS NOT NULL',
    );
    this.addSql(
      "CREATE UNIQUE INDEX transactions_gateway_trx_id_completed_uniq ON transactions (gateway_id, upper(gateway_trx_id)) WHERE gateway_trx_id IS NOT NULL AND status = 'completed'",
    );
    this.addSql(`
      CREATE TABLE checkout_submission_counts (
        intent_id bigint PRIMARY KEY REFERENCES payment_intents(id) ON DELETE CASCADE,
        replacements integer NOT NULL DEFAULT 0 CHECK (replacements >= 0),
        taken_answers integer NOT NULL DEFAULT 0 CHECK (taken_answers >= 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  override down(): void {
    this.addSql('DROP TABLE checkout_submission_counts');
    this.addSql('DROP INDEX transactions_gateway_trx_id_completed_uniq');
    this.addSql('DROP INDEX transactions_gateway_trx_id_uniq');
    this.addSql(
      'CREATE UNIQUE INDEX transactions_gateway_trx_id_uniq ON transactions (gateway_id, upper(gateway_trx_id)) WHERE gateway_trx_id IS NOT NULL',
    );
  }
}
