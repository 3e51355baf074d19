import { sql } from 'kysely';
import { rawStatement, type Db } from '../db.ts';
import type { BucketState } from './policy.ts';

/** A counted bucket, with what is needed to give the hit back. */
export interface CountedBucket extends BucketState {
  windowEpoch: number;
}

/** What countHits' raw statement returns: the counter and two values computed from the database clock. */
interface CountedRow {
  bucket: string;
  hits: number | string;
  reset_seconds: number | string;
  window_epoch: number | string;
}

/** A bucket's counter after an increment: the window's total, this increment included. */
export interface CounterTotal {
  hits: number;
  resetSeconds: number;
  windowEpoch: number;
}

/**
 * The increment itself, from a relation `from` of (bucket, w, n, window_start)
 * rows with distinct buckets: inserted in bucket order (two statements spending
 * the same buckets lock them in the same order), atomic under any concurrency,
 * returning each counter's new total and its window from the database clock.
 * Shared by countHits and the API-key lookup that counts its requests
 * (domain/brands/service.ts `lookupAndCountApiKeys`).
 */
export function countUpsert(from: string): string {
  return `INSERT INTO rate_limits AS r (bucket, window_start, hits, expires_at)
     SELECT bucket, window_start, n, window_start + make_interval(secs => w) FROM ${from} ORDER BY bucket
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = r.hits + EXCLUDED.hits
     RETURNING r.bucket, r.hits,
               greatest(1, ceil(extract(epoch FROM r.expires_at - now())))::integer AS reset_seconds,
               extract(epoch FROM r.window_start)::bigint AS window_epoch`;
}

/**
 * countHits' statement, the increments as parallel arrays. Raw: a list read as a
 * table feeding countUpsert's text, which the typed builder cannot express; one
 * statement per request (or batch) on the hottest path there is.
 */
const countIncrements = rawStatement<CountedRow>(
  `WITH windowed AS (
     SELECT bucket, w, n, to_timestamp(floor(extract(epoch FROM now()) / w) * w) AS window_start
       FROM unnest($1::varchar[], $2::integer[], $3::integer[]) AS input (bucket, w, n)
   )
   ${countUpsert('windowed')}`,
);

/**
 * Adds `n` hits to each bucket's current window in one statement and returns
 * the new totals by key. Keys must be distinct (an upsert cannot touch a row
 * twice); the batcher (batch.ts) sums a batch's requests per bucket first.
 * The window comes from the database clock, so every process agrees on it;
 * `INSERT ... ON CONFLICT DO UPDATE` makes the increment atomic under any
 * concurrency. Rows are inserted in bucket order so two statements spending the
 * same two buckets lock them in the same order and cannot deadlock.
 */
export async function countHits(em: Db, increments: ReadonlyArray<{ key: string; windowSeconds: number; n: number }>): Promise<Map<string, CounterTotal>> {
  if (increments.length === 0) return new Map();
  const rows = await countIncrements(em, [increments.map((b) => b.key), increments.map((b) => b.windowSeconds), increments.map((b) => b.n)]);
  return new Map(rows.map((r) => [r.bucket, { hits: Number(r.hits), resetSeconds: Number(r.reset_seconds), windowEpoch: Number(r.window_epoch) }]));
}

/** Takes one hit back (a `failuresOnly` bucket after a successful request). */
export async function giveBackHit(em: Db, bucket: Pick<CountedBucket, 'key' | 'windowEpoch'>): Promise<void> {
  await em
    .updateTable('rate_limits')
    .set({ hits: sql<number>`hits - 1` })
    .where('bucket', '=', bucket.key)
    .where('window_start', '=', sql<Date>`to_timestamp(${bucket.windowEpoch})`)
    .where('hits', '>', 0)
    .execute();
}

/** Deletes up to `limit` windows that ended; returns how many. */
export async function purgeExpiredWindows(em: Db, limit = 5000): Promise<number> {
  // Raw: a bounded delete picks its rows by ctid, a system column the typed builder does not know.
  const { rows } = await sql<{ n: number | string }>`WITH gone AS (
       DELETE FROM rate_limits WHERE ctid = ANY (ARRAY(SELECT ctid FROM rate_limits WHERE expires_at < now() LIMIT ${limit}))
       RETURNING 1
     ) SELECT count(*) AS n FROM gone`.execute(em);
  return Number(rows[0]?.n ?? 0);
}
