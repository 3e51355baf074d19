import { Migration } from '@mikro-orm/migrations';

/**
 * A refund paid out by hand records what the operator sent back: the wallet's
 * transaction id of the money (`completion_reference`) and an optional note
 * (`completion_note`). Both null for refunds completed before, by a gateway, or failed.
 */
export class Migration0029RefundCompletionReference extends Migration {
  override name = '0029-refund-completion-reference';

  override up(): void {
    this.addSql(`alter table "refunds" add "completion_reference" varchar(100) null, add "completion_note" varchar(500) null;`);
  }

  override down(): void {
    this.addSql(`alter table "refunds" drop column "completion_reference", drop column "completion_note";`);
  }
}
