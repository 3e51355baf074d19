import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, pairDevice } from '../support/device.ts';
import { startSecondInstance, type Instance } from '../support/second-instance.ts';
import { purgeExpiredWindows } from '../../server/domain/rate-limit/queries.ts';

// Day-long windows: a test never straddles a window boundary (except at midnight UTC).
const env = {
  RATE_LIMIT_API_KEY: '5/86400',
  RATE_LIMIT_DEVICE: '4/86400',
  RATE_LIMIT_CHECKOUT: '3/86400',
  WORKERS_ENABLED: 'false',
};

let t: TestContext;
beforeAll(async () => {
  t = await startTestServer(env);
});
afterAll(() => t?.close());

function expectRateLimited(res: { status: number; headers: Headers; body: any }, policy: string) {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ success: false, error: 'Too many requests', errors: [{ code: 'RATE_LIMITED', message: 'Too many requests', field: null }] });
  expect(res.body.request_id).toMatch(/^req_/);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 86400).toBe(true);
  expect(res.headers.get('ratelimit-policy')).toBe(policy);
  expect(res.headers.get('ratelimit')).toMatch(new RegExp(`;r=0;t=${retryAfter}$`));
}

describe('per API key', () => {
  it('answers RateLimit headers while allowed, then 429 with Retry-After; another key of the brand has its own quota', async () => {
    const { apiKey, brandId } = await t.createBrand('Limited');
    for (let i = 1; i <= 5; i++) {
      const res = await t.request('GET', '/api/v1/brand', { token: apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"api-key";q=5;w=86400');
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"api-key";r=${5 - i};t=\\d+$`));
      expect(res.headers.get('retry-after')).toBeNull();
    }
    expectRateLimited(await t.request('GET', '/api/v1/brand', { token: apiKey }), '"api-key";q=5;w=86400');
    // Every merchant route shares the key's quota.
    expectRateLimited(await t.request('GET', '/api/v1/customers', { token: apiKey }), '"api-key";q=5;w=86400');

    const { createApiKey } = await import('../../server/domain/brands/service.ts');
    const { key: second } = await createApiKey(t.runtime.deps.db, brandId, { name: 'second' });
    expect((await t.request('GET', '/api/v1/brand', { token: second })).status).toBe(200);
  });

  it('twenty concurrent requests on a quota of 5: exactly 5 pass', async () => {
    const { apiKey } = await t.createBrand('Concurrent');
    const results = await Promise.all(Array.from({ length: 20 }, () => t.request('GET', '/api/v1/brand', { token: apiKey })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15);
    const remaining = results.filter((r) => r.status === 200).map((r) => Number(/r=(\d+)/.exec(r.headers.get('ratelimit')!)![1]));
    expect(remaining.sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('the key is looked up and the request counted by one statement, and counted once', async () => {
    const { apiKey } = await t.createBrand('One statement');
    // The first use also refreshes last_used_at (once a minute): not part of what is counted below.
    expect((await t.request('GET', '/api/v1/brand', { token: apiKey })).status).toBe(200);
    const texts: string[] = [];
    const query = pg.Client.prototype.query;
    const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const c = args[0] as string | { text?: string } | undefined;
      const text = typeof c === 'string' ? c : c?.text;
      if (text) texts.push(text);
      return (query as (...a: unknown[]) => unknown).apply(this, args) as never;
    });
    let res;
    try {
      res = await t.request('GET', '/api/v1/brand', { token: apiKey });
    } finally {
      spy.mockRestore();
    }
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/^"api-key";r=3;t=\d+$/);
    const keyOrCount = texts.filter((q) => /api_keys|rate_limits/.test(q));
    expect(keyOrCount).toHaveLength(1);
    expect(keyOrCount[0]).toMatch(/api_keys[\s\S]*INSERT INTO rate_limits/);
  });

  it('a wrong key is refused by authentication (401), before any quota is spent', async () => {
    const res = await t.request('GET', '/api/v1/brand', { token: `pk_live_${'B'.repeat(40)}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('ratelimit')).toBeNull();
  });
});

describe('per device', () => {
  it('each device has its own quota across every device route', async () => {
    const a = await pairDevice(t);
    const b = await pairDevice(t, { brandId: a.brandId });
    const paths = ['/dashboard', '/config/filter-rules', '/notifications', '/sms/queues'];
    for (const [i, p] of paths.entries()) {
      const res = await t.request('GET', `${DEVICE_API}${p}`, { token: a.accessToken });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"device";r=${3 - i};t=\\d+$`));
    }
    expectRateLimited(await t.request('POST', `${DEVICE_API}/devices/heartbeats`, { token: a.accessToken }), '"device";q=4;w=86400');
    expect((await t.request('GET', `${DEVICE_API}/dashboard`, { token: b.accessToken })).status).toBe(200);
  });
});

describe('per client address on the public checkout', () => {
  it('counts every call from the address, found or not', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.request('GET', '/api/checkout/v1/payments/00000000-0000-4000-8000-000000000000');
      expect(res.status).toBe(404);
      expect(res.headers.get('ratelimit-policy')).toBe('"checkout";q=3;w=86400');
    }
    expectRateLimited(await t.request('GET', '/api/checkout/v1/payments/00000000-0000-4000-8000-000000000000'), '"checkout";q=3;w=86400');
  });
});

describe('routes without a limit', () => {
  it('admin and health answer no RateLimit headers', async () => {
    const admin = await t.request('GET', '/api/admin/v1/settings', { token: t.runtime.deps.secrets.adminToken });
    expect(admin.status).toBe(200);
    expect(admin.headers.get('ratelimit')).toBeNull();
    expect((await t.request('GET', '/healthz')).headers.get('ratelimit-policy')).toBeNull();
  });
});

describe('shared by every server process through PostgreSQL', () => {
  let second: Instance;
  beforeAll(async () => {
    second = await startSecondInstance(t);
  });
  afterAll(() => second?.close());

  it('requests to either instance spend one quota', async () => {
    const { apiKey } = await t.createBrand('Two processes');
    const onSecond = () => fetch(`${second.baseUrl}/api/v1/brand`, { headers: { authorization: `Bearer ${apiKey}` } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await t.request('GET', '/api/v1/brand', { token: apiKey })).status);
      statuses.push((await onSecond()).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const last = await onSecond();
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('counter rows', () => {
  it('hold no credential or address, and expired windows are purged', async () => {
    const rows = await t.sql<{ bucket: string }>('SELECT bucket FROM rate_limits');
    expect(rows.length).toBeGreaterThan(0);
    for (const { bucket } of rows) expect(bucket).toMatch(/^(api-key:\d+|device:\d+|(checkout|pairing):[0-9a-f]{32}|pairing-global)$/);
    // The earlier tests' short windows may expire any moment now: they are kept an hour, so only the planted row is due.
    await t.sql("UPDATE rate_limits SET expires_at = now() + interval '1 hour'");
    await t.sql("INSERT INTO rate_limits (bucket, window_start, hits, expires_at) VALUES ('api-key:0', now() - interval '2 hours', 3, now() - interval '1 hour')");
    const purged = await purgeExpiredWindows(t.runtime.deps.db);
    expect(purged).toBe(1);
    expect(await t.sql("SELECT 1 FROM rate_limits WHERE bucket = 'api-key:0'")).toEqual([]);
    expect((await t.sql('SELECT 1 FROM rate_limits')).length).toBe(rows.length);
  });
});
