import { grouped } from '../../infra/database/grouped.ts';
import type { Bucket } from './policy.ts';
import { countHits, type CountedBucket, type CounterTotal } from './store.ts';
import type { Db } from '../db.ts';

/**
 * Group counting (infra/database/grouped.ts): requests that need a count while
 * a counting statement is in flight wait for it and then go to the database
 * together, in one statement that adds each bucket's number of waiting requests. Each request still gets
 * its exact place in its bucket's count, as if they had been counted one after
 * the other in arrival order, and nothing passes uncounted.
 *
 * Why: one upsert round trip per request was the largest single cost of a
 * merchant read (a merchant lookup ran at ~0.6 of the hand-written baseline
 * with the limiter, ~0.9 without; bench/merchant-reads.ts, BENCHMARKS.md). A
 * round trip per batch instead of per request keeps the count exact and shared
 * by every process, as store.ts promises, at a fraction of the cost. When idle,
 * a request is counted at once (no timer, no added wait); under load it waits
 * at most for the statement in flight.
 */

export interface Waiting {
  buckets: readonly Bucket[];
}

/**
 * Pure: each waiting request's buckets with their counts, given the new
 * totals. A bucket that k requests of the batch spent, now at total T, gave
 * them T-k+1 ... T in arrival order.
 */
export function assignCounts(batch: readonly Waiting[], totals: ReadonlyMap<string, CounterTotal>): CountedBucket[][] {
  const used = new Map<string, number>();
  const spent = sumByKey(batch);
  return batch.map((w) =>
    w.buckets.map((b) => {
      const total = totals.get(b.key);
      if (!total) throw new Error('rate limit counter missing from upsert result');
      const i = used.get(b.key) ?? 0;
      used.set(b.key, i + 1);
      return { ...b, ...total, hits: total.hits - spent.get(b.key)!.n + 1 + i };
    }),
  );
}

/** How many hits each bucket gets from the batch, in first-seen order. */
export function sumByKey(batch: readonly Waiting[]): Map<string, { key: string; windowSeconds: number; n: number }> {
  const sums = new Map<string, { key: string; windowSeconds: number; n: number }>();
  for (const w of batch) {
    for (const b of w.buckets) {
      const s = sums.get(b.key);
      if (s) s.n++;
      else sums.set(b.key, { key: b.key, windowSeconds: b.windowSeconds, n: 1 });
    }
  }
  return sums;
}

/** Most requests one statement counts (bounds its parameter list). */
const MAX_BATCH = 500;

export interface HitCounter {
  count(buckets: readonly Bucket[]): Promise<CountedBucket[]>;
}

export function createHitCounter(em: () => Db): HitCounter {
  const count = grouped(async (batch: Waiting[]) => assignCounts(batch, await countHits(em(), [...sumByKey(batch).values()])), { maxBatch: MAX_BATCH, concurrency: 2 });
  return { count: (buckets) => count({ buckets }) };
}
