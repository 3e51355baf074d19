import { Migration } from '@mikro-orm/migrations';

/**
 * Several webhook endpoints per brand. The one-per-brand rule goes; each
 * endpoint may belong to one mode (`mode`: created by a live or a test key,
 * receives that mode's events only) or to both (`mode` NULL: the endpoint set
 * through the older singular route, which has always received both modes with
 * `livemode` in the body). Health gains the count of failed attempts since the
 * last success and the time of the last failure. `description` is the
 * merchant's own label. The cap per brand is enforced by the service under a
 * brand row lock; the index serves the fan-out read in the outbox.
 *
 * Deleting an endpoint keeps its delivery log: deliveries lose the reference
 * (endpoint_id NULL) instead of being cascaded away; the service dead-letters
 * the unfinished ones first, and nothing claims or replays a delivery without
 * an endpoint (both join the endpoint).
 */
export class Migration0017WebhookEndpoints extends Migration {
  override name = '0017-webhook-endpoints';

  override up(): void {
    this.addSql('ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_brand_id_key');
    this.addSql("ALTER TABLE webhook_endpoints ADD COLUMN mode text NULL CHECK (mode IN ('live', 'test'))");
    this.addSql("ALTER TABLE webhook_endpoints ADD COLUMN description text NOT NULL DEFAULT '' CHECK (length(description) <= 200)");
    this.addSql('ALTER TABLE webhook_endpoints ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0)');
    this.addSql('ALTER TABLE webhook_endpoints ADD COLUMN last_failure_at timestamptz NULL');
    this.addSql('CREATE INDEX webhook_endpoints_brand_idx ON webhook_endpoints (brand_id, id)');
    // GET /api/v1/events pages a brand's events of one mode by id (and `listen` polls it).
    this.addSql('CREATE INDEX webhook_events_brand_mode_id_idx ON webhook_events (brand_id, mode, id)');
    this.addSql('ALTER TABLE webhook_deliveries ALTER COLUMN endpoint_id DROP NOT NULL');
    this.addSql('ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey');
    this.addSql('ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE SET NULL');
  }

  override down(): void {
    this.addSql('DELETE FROM webhook_deliveries WHERE endpoint_id IS NULL');
    this.addSql('ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey');
    this.addSql('ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE');
    this.addSql('ALTER TABLE webhook_deliveries ALTER COLUMN endpoint_id SET NOT NULL');
    this.addSql('DROP INDEX webhook_events_brand_mode_id_idx');
    this.addSql('DROP INDEX webhook_endpoints_brand_idx');
    this.addSql('ALTER TABLE webhook_endpoints DROP COLUMN last_failure_at, DROP COLUMN consecutive_failures, DROP COLUMN description, DROP COLUMN mode');
    this.addSql('ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_brand_id_key UNIQUE (brand_id)');
  }
}
