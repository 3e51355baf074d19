import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';

let t: TestContext;
beforeAll(async () => {
  // One proxy in front: the client is the address that proxy appended (the rightmost).
  t = await startTestServer({ TRUST_PROXY: '1', RATE_LIMIT_CHECKOUT: '3/86400', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const view = (xff: string) => t.request('GET', `/api/checkout/v1/payments/${randomUUID()}`, { headers: { 'x-forwarded-for': xff } });

describe('TRUST_PROXY as a hop count', () => {
  it('a forged leftmost X-Forwarded-For does not change the rate-limit bucket', async () => {
    // An appending proxy turns the client's forged header into "forged, real".
    for (let i = 0; i < 3; i++) expect((await view(`198.51.100.${i + 1}, 203.0.113.7`)).status).toBe(404);
    const refused = await view('198.51.100.99, 203.0.113.7');
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].code).toBe('RATE_LIMITED');
    // Another real client behind the same proxy has a bucket of its own.
    expect((await view('198.51.100.1, 203.0.113.8')).status).toBe(404);
  });
});
