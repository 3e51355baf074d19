import { Migration } from '@mikro-orm/migrations';

/**
 * A person may dismiss an SMS record left for review (it proves no payment: a
 * personal transfer, a test), so the review queue can empty: `dismissed` joins
 * the resolutions. The constraint keeps its name, so the entities' enum check
 * and the database agree.
 */
export class Migration0024SmsDismissals extends Migration {
  override name = '0024-sms-dismissals';

  override up(): void {
    this.addSql('ALTER TABLE sms_records DROP CONSTRAINT sms_records_resolution_check');
    this.addSql("ALTER TABLE sms_records ADD CONSTRAINT sms_records_resolution_check CHECK (resolution IN ('verified', 'rejected', 'dismissed'))");
  }
}
