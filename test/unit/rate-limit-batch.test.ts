import { describe, expect, it } from 'vitest';
import { assignCounts, sumByKey, type Waiting } from '../../server/domain/rate-limit/batch.ts';
import type { Bucket } from '../../server/domain/rate-limit/policy.ts';
import type { CounterTotal } from '../../server/domain/rate-limit/store.ts';

const bucket = (key: string, limit = 100, windowSeconds = 60, failuresOnly = false): Bucket => ({ quota: 'api-key', key, limit, windowSeconds, failuresOnly });
const total = (hits: number, resetSeconds = 30, windowEpoch = 1_800_000_000): CounterTotal => ({ hits, resetSeconds, windowEpoch });

describe('sumByKey', () => {
  it('adds up the hits each bucket gets from a batch, keeping its window', () => {
    const batch: Waiting[] = [
      { buckets: [bucket('api-key:1'), bucket('pairing-global', 300, 900, true)] },
      { buckets: [bucket('api-key:1')] },
      { buckets: [bucket('api-key:2'), bucket('pairing-global', 300, 900, true)] },
    ];
    expect([...sumByKey(batch).values()]).toEqual([
      { key: 'api-key:1', windowSeconds: 60, n: 2 },
      { key: 'pairing-global', windowSeconds: 900, n: 2 },
      { key: 'api-key:2', windowSeconds: 60, n: 1 },
    ]);
  });

  it('is empty for an empty batch', () => {
    expect(sumByKey([]).size).toBe(0);
  });
});

describe('assignCounts: each request gets its place in arrival order, as if counted one by one', () => {
  const cases: Array<{ name: string; batch: string[][]; totals: Record<string, number>; expected: number[][] }> = [
    { name: 'one request', batch: [['a']], totals: { a: 7 }, expected: [[7]] },
    { name: 'three requests on one bucket', batch: [['a'], ['a'], ['a']], totals: { a: 10 }, expected: [[8], [9], [10]] },
    { name: 'the first hits of a new window', batch: [['a'], ['a']], totals: { a: 2 }, expected: [[1], [2]] },
    {
      name: 'buckets shared by some requests only',
      batch: [['a', 'g'], ['a'], ['b', 'g']],
      totals: { a: 5, g: 9, b: 1 },
      expected: [[4, 8], [5], [1, 9]],
    },
    { name: 'past the limit, each still gets its own count', batch: [['a'], ['a'], ['a']], totals: { a: 102 }, expected: [[100], [101], [102]] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const batch = c.batch.map((keys) => ({ buckets: keys.map((k) => bucket(k)) }));
      const totals = new Map(Object.entries(c.totals).map(([k, v]) => [k, total(v)]));
      const counted = assignCounts(batch, totals);
      expect(counted.map((r) => r.map((b) => b.hits))).toEqual(c.expected);
    });
  }

  it('keeps each bucket as it was and adds the window figures of its total', () => {
    const [[counted]] = assignCounts([{ buckets: [bucket('device:3', 120, 60)] }], new Map([['device:3', total(4, 17, 1_800_000_060)]])) as [[unknown]];
    expect(counted).toEqual({ quota: 'api-key', key: 'device:3', limit: 120, windowSeconds: 60, failuresOnly: false, hits: 4, resetSeconds: 17, windowEpoch: 1_800_000_060 });
  });

  it('refuses to invent a count the database did not return', () => {
    expect(() => assignCounts([{ buckets: [bucket('a'), bucket('b')] }], new Map([['a', total(1)]]))).toThrow('rate limit counter missing from upsert result');
  });
});
