import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../server/infra/database/embedded.ts';
import { sql } from 'kysely';
import { createOrm, migrate } from '../../server/infra/database/orm.ts';
import { openDatabase, type Db } from '../../server/domain/db.ts';
import { entities } from '../../server/domain/entities.ts';
import { freePort } from '../../server/infra/database/local-server.ts';
export { freePort };


export interface BenchDatabase {
  url: string;
  /** The migrated database, for seeding through the real services; closed by stop(). */
  db: Db;
  /** PostgreSQL server version string (for the report). */
  version: string;
  stop(): Promise<void>;
}

/**
 * Every benchmark gets a PostgreSQL of its own in a temp dir, so a run never
 * touches `.data/` or a test cluster, and two benchmarks never share caches.
 * Durability settings stay at PostgreSQL's defaults (fsync on): the write
 * paths pay the real WAL flush, and ours and the baseline pay it alike.
 */
export async function startBenchDatabase(opts: { statements?: boolean } = {}): Promise<BenchDatabase> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-bench-'));
  const cluster = await startEmbeddedPostgres({
    dataDir: dir,
    port: await freePort(),
    password: randomBytes(12).toString('hex'),
    database: 'bench',
    // Ours (pool 10 + pg-boss 4), the baseline (pool 10), the seeder and the orchestrator fit easily.
    settings: {
      max_connections: '200',
      // --statements: count what each side runs per request (a small cost per statement, paid by both).
      ...(opts.statements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {}),
    },
  });
  let db: Db | undefined;
  try {
    const orm = await createOrm({ url: cluster.url, entities, poolMax: 2 });
    await migrate(orm).finally(() => orm.close());
    db = openDatabase({ url: cluster.url, poolMax: 4 });
    if (opts.statements) await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(db);
    const { rows: [{ server_version: version }] } = (await sql<{ server_version: string }>`SHOW server_version`.execute(db)) as { rows: [{ server_version: string }] };
    const opened = db;
    return {
      url: cluster.url,
      db: opened,
      version,
      async stop() {
        await opened.destroy().catch(() => undefined);
        await cluster.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await db?.destroy().catch(() => undefined);
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export interface StatementCount {
  /** Statement text as PostgreSQL normalised it (constants replaced by $n), cut short. */
  query: string;
  calls: number;
  /** Time PostgreSQL spent executing it, all calls together (ms). */
  totalMs: number;
}

/** pg_stat_statements of the benchmark database (only with --statements). */
export function statementStats(url: string) {
  const run = async <T>(fn: (c: pg.Client) => Promise<T>) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  return {
    reset: () => run((c) => c.query('SELECT pg_stat_statements_reset()')).then(() => undefined),
    read: () =>
      run(async (c) =>
        (
          await c.query<{ query: string; calls: string; total_ms: number }>(
            `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query, sum(calls)::bigint AS calls, sum(total_exec_time)::float8 AS total_ms
               FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' GROUP BY 1 ORDER BY 2 DESC`,
          )
        ).rows.map((r) => ({ query: r.query, calls: Number(r.calls), totalMs: Math.round(r.total_ms) })),
      ),
  };
}

/**
 * Waits until no statement runs on the database but ours for a second (4
 * samples 250 ms apart; at most 150 s), and answers how long that took.
 * Requests the load generator gave up on at the end of a saturated run go on
 * in the server, and their statements in PostgreSQL, for seconds afterwards.
 */
export async function waitForQuietDatabase(url: string): Promise<number> {
  const started = Date.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let quiet = 0, i = 0; quiet < 4 && i < 600; i++) {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()",
      );
      quiet = rows[0]!.n === 0 ? quiet + 1 : 0;
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await client.end();
  }
  return Date.now() - started;
}

/**
 * waitForQuietDatabase, then a checkpoint, so a paced run that follows
 * measures latency and not the previous run's leftovers: without it the first
 * paced run after a saturated one (ours, by the alternation) measured a p99 of
 * 857 ms against the baseline's 38 ms in the SMS benchmark.
 */
export async function drainDatabase(url: string): Promise<void> {
  await waitForQuietDatabase(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

/** A pg-boss job that started inside a window: its queue, when it started (ms after the window's start) and how long it ran. */
export interface BackgroundJob {
  name: string;
  at: number;
  ms: number | null;
}

/** Our server's pg-boss jobs (sweeps, deliveries) that started between two epoch times: what ran in the background of a round. */
export async function jobsDuring(url: string, from: number, to: number): Promise<BackgroundJob[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // pg-boss's own table, read directly: the bench wants every job of every queue, which its API lists one queue at a time.
    const { rows } = await client.query<{ name: string; at: number; ms: number | null }>(
      `SELECT name, (extract(epoch FROM started_on) * 1000 - $1)::float8 AS at,
              (extract(epoch FROM completed_on - started_on) * 1000)::float8 AS ms
         FROM pgboss.job WHERE started_on >= to_timestamp($1 / 1000.0) AND started_on < to_timestamp($2 / 1000.0) ORDER BY started_on`,
      [from, to],
    );
    return rows.map((r) => ({ name: r.name, at: Math.round(r.at), ms: r.ms === null ? null : Math.round(r.ms) }));
  } catch (err) {
    // No pg-boss schema yet (undefined_table: our server has not started on this database): nothing ran.
    if ((err as { code?: string }).code === '42P01') return [];
    throw err;
  } finally {
    await client.end();
  }
}
