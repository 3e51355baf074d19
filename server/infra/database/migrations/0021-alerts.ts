import { Migration } from '@mikro-orm/migrations';

/**
 * Operator alerts. An alert row is written in the same transaction as the
 * change that causes it, together with its delivery job (outbox). The unique
 * (brand, type, dedupe_key) makes one episode (one offline transition, one low
 * battery run, ...) one alert however often its source fires. Each channel's
 * attempts are kept on the row so a failure is visible in the admin API.
 * `alert_brand_settings` holds the per-brand switches: types switched off.
 */
export class Migration0021Alerts extends Migration {
  override name = '0021-alerts';

  override up(): void {
    this.addSql(`CREATE TABLE alerts (
      id bigserial PRIMARY KEY,
      brand_id bigint NOT NULL REFERENCES brands(id) ON DELETE CASCADE,
      type text NOT NULL CHECK (type IN ('device_offline', 'battery_low', 'review_waiting', 'webhook_endpoint_disabled', 'sms_format_alarm')),
      dedupe_key text NOT NULL CHECK (length(dedupe_key) BETWEEN 1 AND 200),
      subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 200),
      details jsonb NOT NULL DEFAULT '{}'::jsonb,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'suppressed')),
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (brand_id, type, dedupe_key)
    )`);
    this.addSql('CREATE INDEX alerts_brand_created_idx ON alerts (brand_id, created_at DESC)');
    this.addSql(`CREATE TABLE alert_brand_settings (
      brand_id bigint PRIMARY KEY REFERENCES brands(id) ON DELETE CASCADE,
      disabled_types text[] NOT NULL DEFAULT '{}',
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  override down(): void {
    this.addSql('DROP TABLE alert_brand_settings');
    this.addSql('DROP TABLE alerts');
  }
}
