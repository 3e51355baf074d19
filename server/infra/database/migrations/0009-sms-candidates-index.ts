import { Migration } from '@mikro-orm/migrations';

/**
 * SMS matching asks for a brand's open transactions with the exact amount the
 * SMS names (server/domain/sms/candidates.ts). The only index on that path was
 * (brand_id, status), which hands back every open transaction of the brand and
 * leaves the amount to a heap filter, one heap page per open transaction for
 * every forwarded SMS; this index finds the amount directly (figures:
 * BENCHMARKS.md, "What the profiles showed", 6). Partial, like the statuses
 * matching reads.
 */
export class Migration0009SmsCandidatesIndex extends Migration {
  override name = '0009-sms-candidates-index';

  override up(): void {
    this.addSql("CREATE INDEX transactions_open_by_amount_idx ON transactions (brand_id, amount) WHERE status IN ('pending', 'awaiting_verification')");
  }

  override down(): void {
    this.addSql('DROP INDEX transactions_open_by_amount_idx');
  }
}
