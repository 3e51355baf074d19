import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';

/**
 * Concurrent requests of several keys, each counted by its own atomic upsert
 * (server/domain/rate-limit/queries.ts), each get their exact place in their own
 * key's window.
 */
let t: TestContext;
beforeAll(async () => {
  // Day-long windows: a test never straddles a window boundary (except at midnight UTC).
  t = await startTestServer({ RATE_LIMIT_API_KEY: '12/86400', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const remainingOf = (res: { headers: Headers }) => Number(/^"api-key";r=(\d+);t=\d+$/.exec(res.headers.get('ratelimit') ?? '')?.[1] ?? NaN);

describe('rate limits under concurrent requests', () => {
  it('three keys, fifteen concurrent requests each on a quota of 12: per key exactly 12 pass with places 11..0, the rest are 429', async () => {
    const keys = await Promise.all([t.createBrand('Batch A'), t.createBrand('Batch B'), t.createBrand('Batch C')]);
    const requests = keys.flatMap(({ apiKey }) => Array.from({ length: 15 }, () => ({ apiKey })));
    const results = await Promise.all(requests.map(({ apiKey }) => t.request('GET', '/api/v1/brand', { token: apiKey }).then((res) => ({ apiKey, res }))));
    for (const { apiKey } of keys) {
      const mine = results.filter((r) => r.apiKey === apiKey).map((r) => r.res);
      expect(mine.filter((r) => r.status === 429)).toHaveLength(3);
      const ok = mine.filter((r) => r.status === 200);
      expect(ok.map(remainingOf).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    }
    const rows = await t.sql<{ hits: number }>("SELECT hits FROM rate_limits WHERE bucket LIKE 'api-key:%' ORDER BY bucket");
    expect(rows.map((r) => r.hits)).toEqual([15, 15, 15]);
  });

  it('a lone request is counted at once with its own place', async () => {
    const { apiKey } = await t.createBrand('Batch D');
    const first = await t.request('GET', '/api/v1/brand', { token: apiKey });
    const second = await t.request('GET', '/api/v1/brand', { token: apiKey });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect([remainingOf(first), remainingOf(second)]).toEqual([11, 10]);
  });
});
