import type { TestContext } from './harness.ts';

/**
 * Presence columns written by any authenticated call (at most once a minute):
 * reading data is allowed to touch them, so they are left out of the checksum.
 */
const VOLATILE_COLUMNS = ['last_seen_at', 'last_used_at'];
/** Counters that every request may change by design. */
const SKIPPED_TABLES = ['rate_limits', 'schema_migrations'];

export interface DbChecksum {
  /** table → `rows:md5` */
  tables: Record<string, string>;
}

/**
 * Row count and content digest of every application table, plus the pg-boss
 * jobs that are not cron ticks: "the database is unchanged" means equal checksums.
 */
export async function dbChecksum(t: Pick<TestContext, 'sql'>): Promise<DbChecksum> {
  const names = await t.sql<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
  );
  const drop = `ARRAY[${VOLATILE_COLUMNS.map((c) => `'${c}'`).join(', ')}]`;
  const parts = names
    .map((n) => n.table_name)
    .filter((n) => !SKIPPED_TABLES.includes(n))
    .map(
      (n) =>
        `SELECT '${n}' AS name, count(*)::text || ':' || md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS digest
           FROM (SELECT to_jsonb(r) - ${drop} AS x FROM "${n}" r) s`,
    );
  parts.push(
    `SELECT 'pgboss.job' AS name, count(*)::text || ':' || md5(coalesce(string_agg(id::text, '|' ORDER BY id::text), '')) AS digest
       FROM pgboss.job WHERE name NOT IN (SELECT name FROM pgboss.schedule)`,
  );
  const rows = await t.sql<{ name: string; digest: string }>(parts.join(' UNION ALL '));
  return { tables: Object.fromEntries(rows.map((r) => [r.name, r.digest])) };
}

/** Tables whose checksum differs, for a readable failure. */
export function changedTables(before: DbChecksum, after: DbChecksum): string[] {
  const names = new Set([...Object.keys(before.tables), ...Object.keys(after.tables)]);
  return [...names].filter((n) => before.tables[n] !== after.tables[n]).sort();
}
