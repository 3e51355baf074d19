import { Migration } from '@mikro-orm/migrations';

/**
 * Pull-on-submit (docs/recovery.md): a backfill request may be restricted to
 * some senders (`senders`, the gateway's official ones; null keeps every
 * allowed sender), and gains the reason `payment_submitted` (a customer
 * submitted a trx id no stored SMS proves). Generated from the entity.
 */
export class Migration0034BackfillSenders extends Migration {
  override name = '0034-backfill-senders';

  override up(): void {
    this.addSql(`alter table "backfill_requests" drop constraint "backfill_requests_reason_check";`);
    this.addSql(`alter table "backfill_requests" add "senders" text[] null;`);
    this.addSql(`alter table "backfill_requests" add constraint "backfill_requests_reason_check" check ("reason" in ('manual', 'offline', 'heartbeat_gap', 'balance_chain_break', 'payment_submitted'));`);
  }

  override down(): void {
    this.addSql(`delete from "backfill_requests" where "reason" = 'payment_submitted';`);
    this.addSql(`alter table "backfill_requests" drop constraint "backfill_requests_reason_check";`);
    this.addSql(`alter table "backfill_requests" drop column "senders";`);
    this.addSql(`alter table "backfill_requests" add constraint "backfill_requests_reason_check" check ("reason" in ('manual', 'offline', 'heartbeat_gap', 'balance_chain_break'));`);
  }
}
