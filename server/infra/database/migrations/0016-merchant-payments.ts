import { Migration } from '@mikro-orm/migrations';

/**
 * A merchant can cancel an open payment (POST /api/v1/payments/{id}/cancel):
 * the intent gets the final status `canceled` and the time it happened. The
 * merchant payment list reads newest first per brand and mode through the
 * existing payment_intents_brand_mode_created_idx; the id tie-break joins it
 * here so a page boundary between equal timestamps is stable and indexed. The
 * cancellation's `payment.canceled` event joins the events webhook_events takes.
 */
export class Migration0016MerchantPayments extends Migration {
  override name = '0016-merchant-payments';

  override up(): void {
    this.addSql('ALTER TABLE payment_intents DROP CONSTRAINT payment_intents_status_check');
    this.addSql("ALTER TABLE payment_intents ADD CONSTRAINT payment_intents_status_check CHECK (status IN ('pending', 'completed', 'expired', 'canceled'))");
    this.addSql('ALTER TABLE payment_intents ADD COLUMN canceled_at timestamptz NULL');
    this.addSql("ALTER TABLE payment_intents ADD CONSTRAINT payment_intents_canceled_at_check CHECK ((status = 'canceled') = (canceled_at IS NOT NULL))");
    this.addSql('DROP INDEX payment_intents_brand_mode_created_idx');
    this.addSql('CREATE INDEX payment_intents_brand_mode_created_idx ON payment_intents (brand_id, mode, created_at DESC, id DESC)');
    // The cancellation's webhook event is stored like every other one.
    this.addSql('ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_event_check');
    this.addSql(`ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_event_check CHECK (event IN ('payment.completed', 'payment.failed',
      'payment.expired', 'payment.canceled', 'refund.completed', 'refund.failed', 'device.offline', 'device.online'))`);
  }

  override down(): void {
    this.addSql('ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_event_check');
    this.addSql(`ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_event_check CHECK (event IN ('payment.completed', 'payment.failed',
      'payment.expired', 'refund.completed', 'refund.failed', 'device.offline', 'device.online'))`);
    this.addSql('DROP INDEX payment_intents_brand_mode_created_idx');
    this.addSql('CREATE INDEX payment_intents_brand_mode_created_idx ON payment_intents (brand_id, mode, created_at DESC)');
    this.addSql('ALTER TABLE payment_intents DROP CONSTRAINT payment_intents_canceled_at_check');
    this.addSql('ALTER TABLE payment_intents DROP COLUMN canceled_at');
    this.addSql('ALTER TABLE payment_intents DROP CONSTRAINT payment_intents_status_check');
    this.addSql("ALTER TABLE payment_intents ADD CONSTRAINT payment_intents_status_check CHECK (status IN ('pending', 'completed', 'expired'))");
  }
}
