import { sql } from 'kysely';
import { rawStatement, type Db } from '../db.ts';
import type { Bucket, BucketState } from './policy.ts';

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

/**
 * The increment itself, one hit, from a relation `from` of (bucket, w,
 * window_start) rows with distinct buckets: inserted in bucket order (two
 * statements spending the same buckets lock them in the same order), atomic
 * under any concurrency, returning each counter's new total and its window from
 * the database clock. Shared by countHits and the API-key lookup that counts its
 * request (domain/brands/service.ts `lookupAndCountApiKey`).
 */
export function countUpsert(from: string): string {
  return `INSERT INTO rate_limits AS r (bucket, window_start, hits, expires_at)
     SELECT bucket, window_start, 1, window_start + make_interval(secs => w) FROM ${from} ORDER BY bucket
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = r.hits + 1
     RETURNING r.bucket, r.hits,
               greatest(1, ceil(extract(epoch FROM r.expires_at - now())))::integer AS reset_seconds,
               extract(epoch FROM r.window_start)::bigint AS window_epoch`;
}

/**
 * countHits' statement, the buckets as parallel arrays. Raw: a list read as a
 * table feeding countUpsert's text, which the typed builder cannot express.
 */
const countIncrements = rawStatement<CountedRow>(
  `WITH windowed AS (
     SELECT bucket, w, to_timestamp(floor(extract(epoch FROM now()) / w) * w) AS window_start
       FROM unnest($1::varchar[], $2::integer[]) AS input (bucket, w)
   )
   ${countUpsert('windowed')}`,
);

/**
 * Counts one request in each of its buckets (distinct keys, as `bucketsFor`
 * gives them) in one statement and returns each bucket with its new total, this
 * request included. The window comes from the database clock, so every process
 * agrees on it; `INSERT ... ON CONFLICT DO UPDATE` makes the increment atomic
 * under any concurrency. Rows are inserted in bucket order so two requests
 * spending the same two buckets lock them in the same order and cannot deadlock.
 */
export async function countHits(em: Db, buckets: readonly Bucket[]): Promise<CountedBucket[]> {
  if (buckets.length === 0) return [];
  const rows = await countIncrements(em, [buckets.map((b) => b.key), buckets.map((b) => b.windowSeconds)]);
  const byKey = new Map(rows.map((r) => [r.bucket, r]));
  return buckets.map((b) => {
    const r = byKey.get(b.key);
    if (!r) throw new Error('rate limit counter missing from upsert result');
    return { ...b, hits: Number(r.hits), resetSeconds: Number(r.reset_seconds), windowEpoch: Number(r.window_epoch) };
  });
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
