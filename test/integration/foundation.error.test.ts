import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyLookup } from '../../server/domain/brands/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';

let t: TestContext;
let apiKey: string;

beforeAll(async () => {
  t = await startTestServer({ BODY_LIMIT_BYTES: '2048' });
  ({ apiKey } = await t.createBrand('Foundation Brand'));
});
afterAll(() => t?.close());

function expectEnvelope(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ success: false, errors: [expect.objectContaining({ code })] });
  expect(typeof res.body.error).toBe('string');
  expect(res.body.error).toBe(res.body.errors[0].message);
  expect(res.body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.headers.get('x-request-id')).toBe(res.body.request_id);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
}

describe('every failure answers the error envelope with a request id', () => {
  it('unknown route: 404 NOT_FOUND', async () => {
    expectEnvelope(await t.request('GET', '/api/v1/nothing-here'), 404, 'NOT_FOUND');
    expectEnvelope(await t.request('DELETE', '/api/v1/brand', { token: apiKey }), 404, 'NOT_FOUND');
    expectEnvelope(await t.request('GET', '/'), 404, 'NOT_FOUND');
  });

  it('malformed JSON: 400 MALFORMED_JSON', async () => {
    const res = await t.request('POST', '/api/v1/brand', { rawBody: '{"amount": ', headers: { 'content-type': 'application/json' } });
    expectEnvelope(res, 400, 'MALFORMED_JSON');
  });

  it('JSON that is not an object or array: 400 MALFORMED_JSON', async () => {
    const res = await t.request('POST', '/api/v1/brand', { rawBody: '"just a string"', headers: { 'content-type': 'application/json' } });
    expectEnvelope(res, 400, 'MALFORMED_JSON');
  });

  it('oversize body: 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await t.request('POST', '/api/v1/brand', { body: { pad: 'x'.repeat(5000) } });
    expectEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('wrong content type: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await t.request('POST', '/api/v1/brand', { rawBody: 'amount=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('unexpected exception: 500 INTERNAL_ERROR without internals', async () => {
    await t.sql('ALTER TABLE brands RENAME TO brands_gone');
    try {
      const res = await t.request('GET', '/api/v1/brand', { token: apiKey });
      expectEnvelope(res, 500, 'INTERNAL_ERROR');
      const text = JSON.stringify(res.body);
      expect(text).not.toMatch(/brands|relation|stack|at .*\.ts|SELECT/i);
    } finally {
      await t.sql('ALTER TABLE brands_gone RENAME TO brands');
    }
    // The failure was logged with its request id for the operator.
    expect(t.logs.some((l) => l.includes('"unhandled error"'))).toBe(true);
  });
});

describe('request ids', () => {
  it('keeps a well-formed incoming X-Request-Id and replaces a malformed one', async () => {
    const kept = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-abc-12345' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-abc-12345');
    const replaced = await t.request('GET', '/nope', { headers: { 'x-request-id': 'bad id with spaces <script>' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
    expect(replaced.body.request_id).toBe(replaced.headers.get('x-request-id'));
  });

  it('is on successful responses too', async () => {
    const res = await t.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('merchant API key authentication', () => {
  it('accepts a valid key and returns its brand', async () => {
    const res = await t.request('GET', '/api/v1/brand', { token: apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, data: { name: 'Foundation Brand', timezone: 'UTC' } });
    expect(res.body.data.created_at).toMatch(/Z$/);
  });

  it.each([
    ['missing', undefined, {}],
    ['not a bearer header', undefined, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['malformed key', 'not-a-key', {}],
    ['unknown key', `pk_live_${'A'.repeat(40)}`, {}],
  ])('%s: 401 UNAUTHORIZED', async (_name, token, headers) => {
    expectEnvelope(await t.request('GET', '/api/v1/brand', { token, headers }), 401, 'UNAUTHORIZED');
  });

  it('a revoked key: 401 UNAUTHORIZED at once', async () => {
    const { apiKey: key, brandId } = await t.createBrand('Revoked Brand');
    expect((await t.request('GET', '/api/v1/brand', { token: key })).status).toBe(200);
    await t.sql('UPDATE api_keys SET revoked_at = now() WHERE brand_id = $1', [brandId]);
    expectEnvelope(await t.request('GET', '/api/v1/brand', { token: key }), 401, 'UNAUTHORIZED');
  });

  /** `n` brands with a key each, the first revoked and the second disabled, and the merchant lookup. */
  async function lookupScene(n: number, name: string, rateLimitWindowSeconds?: number) {
    const brands = await Promise.all(Array.from({ length: n }, (_, i) => t.createBrand(`${name} ${i}`)));
    const [revoked, disabled] = brands;
    await t.sql('UPDATE api_keys SET revoked_at = now() WHERE brand_id = $1', [revoked!.brandId]);
    await t.sql("UPDATE brands SET status = 'disabled' WHERE id = $1", [disabled!.brandId]);
    const lookup = apiKeyLookup(() => t.runtime.deps.db, rateLimitWindowSeconds);
    return { brands, revoked, disabled, lookup };
  }

  it('concurrent lookups each get their own answer (no cache: a revocation is seen at once)', async () => {
    const { brands, revoked, disabled, lookup } = await lookupScene(6, 'Concurrent');
    const presented = [...brands.map((b) => b.apiKey), `pk_live_${'B'.repeat(40)}`, 'junk'];
    const calls = Array.from({ length: 8 }, () => presented).flat();
    const answers = await Promise.all(calls.map(async (k) => (await lookup(k)).principal));
    answers.forEach((a, i) => {
      const b = brands.find((x) => x.apiKey === calls[i]);
      if (!b || b === revoked || b === disabled) expect(a).toBeNull();
      else expect(a).toEqual({ brandId: b.brandId, apiKeyId: expect.any(Number), mode: 'live', scopes: null });
    });
    // Revoked after being looked up: the very next lookup refuses it.
    const live = brands[2]!;
    expect((await lookup(live.apiKey)).principal).not.toBeNull();
    await t.sql('UPDATE api_keys SET revoked_at = now() WHERE brand_id = $1', [live.brandId]);
    expect((await lookup(live.apiKey)).principal).toBeNull();
  });

  it('lookups that count: accepted keys only, each request its exact place; a revocation is still seen at once', async () => {
    const { brands, revoked, disabled, lookup } = await lookupScene(4, 'Counted', 60);
    const presented = [...brands.map((b) => b.apiKey), `pk_live_${'C'.repeat(40)}`];
    const calls = Array.from({ length: 6 }, () => presented).flat();
    const answers = await Promise.all(calls.map((k) => lookup(k, { count: true })));
    const bucketHits = async (apiKeyId: number) =>
      (await t.sql<{ hits: number }>("SELECT hits FROM rate_limits WHERE bucket = 'api-key:' || $1::text", [apiKeyId])).map((r) => Number(r.hits));
    for (const b of brands.slice(2)) {
      const mine = answers.filter((_, i) => calls[i] === b.apiKey);
      const apiKeyId = mine[0]!.principal!.apiKeyId;
      // Six concurrent requests of one key: places 1..6, each once, and the window's count is 6.
      expect(mine.map((a) => a.counted?.hits).sort((x, y) => x! - y!)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(mine.every((a) => a.counted!.resetSeconds >= 1 && a.counted!.resetSeconds <= 60)).toBe(true);
      expect(await bucketHits(apiKeyId)).toEqual([6]);
    }
    // Refused keys are neither accepted nor counted.
    for (const [i, a] of answers.entries()) if (![brands[2]!.apiKey, brands[3]!.apiKey].includes(calls[i]!)) expect(a).toEqual({ principal: null, counted: null });
    const revokedIds = await t.sql<{ id: number }>('SELECT id FROM api_keys WHERE brand_id = ANY($1::bigint[])', [[revoked!.brandId, disabled!.brandId]]);
    for (const r of revokedIds) expect(await bucketHits(Number(r.id))).toEqual([]);
    // A lookup not asked to count leaves the count alone.
    const live = brands[2]!;
    expect(await lookup(live.apiKey)).toEqual({ principal: expect.objectContaining({ brandId: live.brandId }), counted: null });
    expect(await bucketHits(answers[calls.indexOf(live.apiKey)]!.principal!.apiKeyId)).toEqual([6]);
    // Revoked after being counted: the very next lookup refuses it and counts nothing.
    await t.sql('UPDATE api_keys SET revoked_at = now() WHERE brand_id = $1', [live.brandId]);
    expect(await lookup(live.apiKey, { count: true })).toEqual({ principal: null, counted: null });
    expect(await bucketHits(answers[calls.indexOf(live.apiKey)]!.principal!.apiKeyId)).toEqual([6]);
  });

  it('stores only the hash of the key', async () => {
    const rows = await t.sql<{ key_hash: string; prefix: string }>('SELECT key_hash, prefix FROM api_keys');
    for (const row of rows) {
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(apiKey.startsWith(row.prefix) || row.prefix.length < apiKey.length).toBe(true);
    }
    const dump = JSON.stringify(await t.sql('SELECT * FROM api_keys'));
    expect(dump).not.toContain(apiKey);
  });

  it('never writes the key to the log', async () => {
    await t.request('GET', '/api/v1/brand', { token: apiKey });
    expect(t.logs.join('\n')).not.toContain(apiKey);
  });
});

describe('health, readiness, docs', () => {
  it('healthz and readyz answer', async () => {
    expect((await t.request('GET', '/healthz')).body).toMatchObject({ success: true, data: { status: 'ok' } });
    const ready = await t.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.data).toMatchObject({ status: 'ready', checks: { database: { status: 'ok' }, jobs: { status: 'ok' } } });
  });

  it('readyz reports not ready while shutting down', async () => {
    t.runtime.deps.state.shuttingDown = true;
    try {
      const res = await t.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.data.status).toBe('not_ready');
    } finally {
      t.runtime.deps.state.shuttingDown = false;
    }
  });

  it('serves the OpenAPI document and a reference page from local assets', async () => {
    const doc = await t.request('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.1\./);
    const page = await fetch(`${t.baseUrl}/docs`);
    const html = await page.text();
    expect(html).toContain('/docs/assets/scalar.js');
    expect(html).not.toMatch(/https?:\/\/(?!localhost)/);
    const asset = await fetch(`${t.baseUrl}/docs/assets/scalar.js`);
    expect(asset.status).toBe(200);
  });
});
