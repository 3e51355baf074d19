import { Migration } from '@mikro-orm/migrations';

/**
 * Rate-limit counters shared by every server process: one row per bucket
 * (`api-key:42`, `pairing:<hashed address>`...) and fixed window, counted by
 * an atomic upsert. Rows are disposable; expired windows are purged.
 * UNLOGGED: counters need no crash safety (a crash at worst forgets part of a
 * window), and skipping the WAL keeps the write per request cheap.
 */
export class Migration0008RateLimits extends Migration {
  override name = '0008-rate-limits';

  override up(): void {
    this.addSql(`
      CREATE UNLOGGED TABLE rate_limits (
        bucket varchar(100) NOT NULL,
        window_start timestamptz NOT NULL,
        hits integer NOT NULL CHECK (hits >= 0),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (bucket, window_start)
      )`);
    this.addSql('CREATE INDEX rate_limits_expires_at_idx ON rate_limits (expires_at)');
  }

  override down(): void {
    this.addSql('DROP TABLE rate_limits');
  }
}
