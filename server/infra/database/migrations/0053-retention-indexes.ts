import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes for the retention job's walks, oldest first: webhook events by age,
 * and finished deliveries by age (open ones are never removed, so not indexed).
 */
export class Migration0053RetentionIndexes extends Migration {
  override name = '0053-retention-indexes';

  override up(): void {
    this.addSql(`create index "webhook_events_created_idx" on "webhook_events" ("created_at");`);

    this.addSql(`create index "webhook_deliveries_finished_idx" on "webhook_deliveries" ("created_at") where status = ANY (ARRAY['success'::text, 'dead_letter'::text]);`);
  }

  override down(): void {
    this.addSql(`drop index "webhook_deliveries_finished_idx";`);
    this.addSql(`drop index "webhook_events_created_idx";`);
  }
}
