import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../server/domain/brands/service.ts';
import { MAX_ENDPOINTS_PER_BRAND } from '../../server/domain/webhooks/endpoints.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';

/** Bad input, limits and scoping of the webhook endpoint collection; nothing half-written. */

let t: TestContext;
let strict: TestContext;
let key: string;
let testKey: string;
let brandId: number;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  ({ apiKey: key, brandId } = await t.createBrand('Errors'));
  testKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'test', mode: 'test' })).key;
  // The production default: loopback and private targets refused.
  strict = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(async () => {
  await t?.close();
  await strict?.close();
});

const valid = { url: 'http://127.0.0.1:9/hooks', events: ['payment.completed'] };
const endpointRows = async () => t.sql('SELECT * FROM webhook_endpoints WHERE brand_id = $1 ORDER BY id', [brandId]);

function expectError(res: { status: number; body: any }, status: number, code: string, field: string | null = null) {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ success: false, errors: expect.arrayContaining([expect.objectContaining({ code, field })]) });
}

describe('credentials', () => {
  const routes: Array<[string, string, unknown]> = [
    ['GET', '/api/v1/webhooks/endpoints', undefined],
    ['POST', '/api/v1/webhooks/endpoints', valid],
    ['GET', '/api/v1/webhooks/endpoints/1', undefined],
    ['PATCH', '/api/v1/webhooks/endpoints/1', { enabled: false }],
    ['DELETE', '/api/v1/webhooks/endpoints/1', undefined],
    ['POST', '/api/v1/webhooks/endpoints/1/secret-rotations', undefined],
    ['POST', '/api/v1/webhooks/endpoints/1/tests', { event: 'payment.completed' }],
    ['GET', '/api/v1/events', undefined],
  ];
  it.each(routes)('%s %s without an API key is 401 UNAUTHORIZED', async (method, path, body) => {
    expectError(await t.request(method, path, { body }), 401, 'UNAUTHORIZED');
  });
});

describe('POST /api/v1/webhooks/endpoints validation', () => {
  const cases: Array<[string, unknown, string]> = [
    ['missing url', { events: ['payment.completed'] }, 'url'],
    ['a relative url', { ...valid, url: '/hooks' }, 'url'],
    ['an ftp url', { ...valid, url: 'ftp://example.com/hooks' }, 'url'],
    ['no events', { ...valid, events: [] }, 'events'],
    ['an unknown event', { ...valid, events: ['payment.refunded'] }, 'events.0'],
    ['a repeated event', { ...valid, events: ['payment.completed', 'payment.completed'] }, 'events'],
    ['a long description', { ...valid, description: 'x'.repeat(201) }, 'description'],
    ['enabled as a string', { ...valid, enabled: 'yes' }, 'enabled'],
  ];
  it.each(cases)('%s: 400 VALIDATION_ERROR naming the field, nothing stored', async (_name, body, field) => {
    const before = await endpointRows();
    expectError(await t.request('POST', '/api/v1/webhooks/endpoints', { token: key, body }), 400, 'VALIDATION_ERROR', field);
    expect(await endpointRows()).toEqual(before);
  });

  it('an unknown member is refused', async () => {
    const res = await t.request('POST', '/api/v1/webhooks/endpoints', { token: key, body: { ...valid, secret: 'whsec_mine' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe('VALIDATION_ERROR');
  });

  it('a private or loopback URL is 422 WEBHOOK_URL_NOT_ALLOWED unless allowed by the setting', async () => {
    const { apiKey } = await strict.createBrand('Strict');
    for (const url of ['http://127.0.0.1/hooks', 'http://10.0.0.5/hooks', 'http://169.254.169.254/latest']) {
      expectError(await strict.request('POST', '/api/v1/webhooks/endpoints', { token: apiKey, body: { ...valid, url } }), 422, 'WEBHOOK_URL_NOT_ALLOWED', 'url');
    }
    expect(await strict.sql('SELECT id FROM webhook_endpoints')).toEqual([]);
  });
});

describe('PATCH, DELETE and the per-endpoint routes', () => {
  it('a malformed id is 400 naming it; an unknown id is 404', async () => {
    for (const id of ['0', 'abc', '1.5', '-3']) {
      expectError(await t.request('GET', `/api/v1/webhooks/endpoints/${id}`, { token: key }), 400, 'VALIDATION_ERROR', 'id');
    }
    expectError(await t.request('GET', '/api/v1/webhooks/endpoints/999999999', { token: key }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expectError(await t.request('PATCH', '/api/v1/webhooks/endpoints/999999999', { token: key, body: { enabled: false } }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expectError(await t.request('DELETE', '/api/v1/webhooks/endpoints/999999999', { token: key }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expectError(await t.request('POST', '/api/v1/webhooks/endpoints/999999999/secret-rotations', { token: key }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expectError(await t.request('POST', '/api/v1/webhooks/endpoints/999999999/tests', { token: key, body: { event: 'payment.completed' } }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
  });

  it('PATCH: an empty body, a bad field or a refused URL changes nothing', async () => {
    const made = await t.request('POST', '/api/v1/webhooks/endpoints', { token: key, body: valid });
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    const before = await endpointRows();
    expectError(await t.request('PATCH', `/api/v1/webhooks/endpoints/${id}`, { token: key, body: {} }), 400, 'VALIDATION_ERROR', 'body');
    expectError(await t.request('PATCH', `/api/v1/webhooks/endpoints/${id}`, { token: key, body: { events: [] } }), 400, 'VALIDATION_ERROR', 'events');
    expectError(await t.request('PATCH', `/api/v1/webhooks/endpoints/${id}`, { token: key, body: { url: 'nope' } }), 400, 'VALIDATION_ERROR', 'url');
    expectError(await t.request('PATCH', `/api/v1/webhooks/endpoints/${id}`, { token: key, body: { mode: 'test' } }), 400, 'VALIDATION_ERROR', 'mode');
    expect(await endpointRows()).toEqual(before);
    await t.request('DELETE', `/api/v1/webhooks/endpoints/${id}`, { token: key });
  });

  it('a test event to a disabled endpoint is 409 INVALID_STATE and records nothing', async () => {
    const made = await t.request('POST', '/api/v1/webhooks/endpoints', { token: key, body: { ...valid, enabled: false } });
    const events = async () => t.sql('SELECT id FROM webhook_events WHERE brand_id = $1', [brandId]);
    const before = await events();
    expectError(await t.request('POST', `/api/v1/webhooks/endpoints/${made.body.data.id}/tests`, { token: key, body: { event: 'payment.completed' } }), 409, 'INVALID_STATE');
    expectError(await t.request('POST', `/api/v1/webhooks/endpoints/${made.body.data.id}/tests`, { token: key, body: { event: 'nope' } }), 400, 'VALIDATION_ERROR', 'event');
    expect(await events()).toEqual(before);
    await t.request('DELETE', `/api/v1/webhooks/endpoints/${made.body.data.id}`, { token: key });
  });

  it("another mode's endpoint is not found for a key, and stays unchanged", async () => {
    const made = await t.request('POST', '/api/v1/webhooks/endpoints', { token: testKey, body: valid });
    expect(made.body.data.mode).toBe('test');
    const id = made.body.data.id;
    const before = await endpointRows();
    expectError(await t.request('GET', `/api/v1/webhooks/endpoints/${id}`, { token: key }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expectError(await t.request('PATCH', `/api/v1/webhooks/endpoints/${id}`, { token: key, body: { enabled: false } }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expectError(await t.request('DELETE', `/api/v1/webhooks/endpoints/${id}`, { token: key }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expectError(await t.request('POST', `/api/v1/webhooks/endpoints/${id}/secret-rotations`, { token: key }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expect(await endpointRows()).toEqual(before);
    await t.request('DELETE', `/api/v1/webhooks/endpoints/${id}`, { token: testKey });
  });
});

describe('the cap per brand', () => {
  it(`at most ${MAX_ENDPOINTS_PER_BRAND} endpoints, both modes together, also when created at once`, async () => {
    const { apiKey, brandId: capped } = await t.createBrand('Capped');
    const cappedTest = (await createApiKey(t.runtime.deps.db, capped, { name: 'test', mode: 'test' })).key;
    const attempts = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS_PER_BRAND + 4 }, (_, i) =>
        t.request('POST', '/api/v1/webhooks/endpoints', { token: i % 2 ? apiKey : cappedTest, body: { ...valid, url: `http://127.0.0.1:9/h${i}` } }),
      ),
    );
    expect(attempts.filter((r) => r.status === 201)).toHaveLength(MAX_ENDPOINTS_PER_BRAND);
    for (const r of attempts.filter((x) => x.status !== 201)) expectError(r, 409, 'WEBHOOK_ENDPOINT_LIMIT_REACHED');
    const [{ n }] = (await t.sql<{ n: string }>('SELECT count(*) AS n FROM webhook_endpoints WHERE brand_id = $1', [capped])) as [{ n: string }];
    expect(Number(n)).toBe(MAX_ENDPOINTS_PER_BRAND);
    // Deleting one makes room again.
    const first = attempts.find((r) => r.status === 201 && r.body.data.mode === 'live')!;
    expect((await t.request('DELETE', `/api/v1/webhooks/endpoints/${first.body.data.id}`, { token: apiKey })).status).toBe(200);
    expect((await t.request('POST', '/api/v1/webhooks/endpoints', { token: apiKey, body: valid })).status).toBe(201);
  });
});

describe('GET /api/v1/events validation', () => {
  const cases: Array<[string, string]> = [
    ['after=abc', 'after'],
    ['after=-1', 'after'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['wait=26', 'wait'],
    ['wait=1.5', 'wait'],
    ['types=payment.completed,nope', 'types'],
    ['since=1', ''],
  ];
  it.each(cases)('%s: 400 VALIDATION_ERROR', async (query, field) => {
    const res = await t.request('GET', `/api/v1/events?${query}`, { token: key });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe('VALIDATION_ERROR');
    if (field) expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });
});
