import { Migration } from '@mikro-orm/migrations';

/**
 * Both reasons added beside each other (0033 `sequence_gap`, 0034 `payment_submitted`)
 * in one check: each of the two migrations rewrote the whole list without the other's.
 */
export class Migration0044BackfillReasons extends Migration {
  override name = '0044-backfill-reasons';

  override up(): void {
    this.addSql(`alter table "backfill_requests" drop constraint "backfill_requests_reason_check";`);
    this.addSql(`alter table "backfill_requests" add constraint "backfill_requests_reason_check" check ("reason" in ('manual', 'offline', 'heartbeat_gap', 'balance_chain_break', 'payment_submitted', 'sequence_gap'));`);
  }

  override down(): void {
    this.addSql(`alter table "backfill_requests" drop constraint "backfill_requests_reason_check";`);
    this.addSql(`alter table "backfill_requests" add constraint "backfill_requests_reason_check" check ("reason" in ('manual', 'offline', 'heartbeat_gap', 'balance_chain_break', 'payment_submitted'));`);
  }
}
