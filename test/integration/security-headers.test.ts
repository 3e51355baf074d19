import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API } from '../support/device.ts';
import { ADMIN_API } from './admin-support.ts';

let t: TestContext;
let key: string;
beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  key = (await t.createBrand('Headers')).apiKey;
});
afterAll(() => t?.close());

const get = (path: string, token?: string) => fetch(t.baseUrl + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('/docs', () => {
  it('the page carries a strict CSP that forbids framing, and nosniff', async () => {
    const res = await get('/docs');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it('serves the two scripts the page loads, with their types', async () => {
    const js = await get('/docs/assets/scalar.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    await js.arrayBuffer();
    const init = await get('/docs/init.js');
    expect(init.status).toBe(200);
    expect(init.headers.get('content-type')).toMatch(/^application\/javascript/);
    await init.arrayBuffer();
  });

  it.each([
    '/docs/index.html',
    '/docs/assets/index.html',
    '/docs/assets/standalone.js',
    '/docs/assets/standalone.js.map',
    '/docs/assets/scalar.js.map',
    '/docs/assets/standalone.esm.js',
    '/docs/assets/style.css',
    '/docs/assets/package.json',
    '/docs/assets/%2e%2e%2fpackage.json',
  ])('the stock file %s is not served', async (path) => {
    const res = await get(path);
    expect(res.status).toBe(404);
    await res.arrayBuffer();
  });
});

describe('every response', () => {
  it('carries nosniff; API answers, checkout pages and their errors carry no-store', async () => {
    const paymentId = randomUUID();
    const noStore: Array<[string, string | undefined, number]> = [
      ['/api/v1/brand', key, 200],
      ['/api/v1/brand', undefined, 401],
      [`${DEVICE_API}/dashboard`, undefined, 401],
      [`${ADMIN_API}/gateways`, t.runtime.deps.secrets.adminToken, 200],
      [`${ADMIN_API}/gateways`, 'nope', 401],
      [`/api/checkout/v1/payments/${paymentId}`, undefined, 404],
      [`/checkout/${paymentId}`, undefined, 404],
      ['/api/v1/no-such-route', key, 404],
    ];
    for (const [path, token, status] of noStore) {
      const res = await get(path, token);
      expect(res.status, path).toBe(status);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      await res.arrayBuffer();
    }
    // Static assets are the same for everyone and may be cached.
    const asset = await get('/checkout/assets/checkout.css');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toMatch(/max-age=3600/);
    expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
    await asset.arrayBuffer();
    for (const path of ['/healthz', '/openapi.json', '/no-such-page']) {
      const res = await get(path);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      await res.arrayBuffer();
    }
  });
});
