import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { emitPaymentCompleted } from '../support/webhook-worker.ts';

let t: TestContext;
let keyA: string;
let keyB: string;
let brandA: number;

beforeAll(async () => {
  // Loopback URLs allowed, workers off: these tests are about the routes, not delivery.
  t = await startTestServer({ WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  ({ apiKey: keyA, brandId: brandA } = await t.createBrand('Brand A'));
  ({ apiKey: keyB } = await t.createBrand('Brand B'));
});
afterAll(() => t?.close());

const valid = { url: 'http://127.0.0.1:9/hooks', events: ['payment.completed'] };

function expectError(res: { status: number; body: any }, status: number, code: string, field: string | null = null) {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ success: false, errors: expect.arrayContaining([expect.objectContaining({ code, field })]) });
}

describe('webhook routes: credentials', () => {
  const routes: Array<[string, string, unknown]> = [
    ['GET', '/api/v1/webhooks/endpoint', undefined],
    ['PUT', '/api/v1/webhooks/endpoint', valid],
    ['POST', '/api/v1/webhooks/endpoint/secret-rotations', undefined],
    ['GET', '/api/v1/webhooks/deliveries', undefined],
    ['GET', '/api/v1/webhooks/deliveries/1', undefined],
  ];
  it.each(routes)('%s %s without or with a bad API key is 401 UNAUTHORIZED', async (method, path, body) => {
    expectError(await t.request(method, path, { body }), 401, 'UNAUTHORIZED');
    expectError(await t.request(method, path, { body, token: 'pk_live_0000000000000000000000000000000000000000' }), 401, 'UNAUTHORIZED');
  });
});

describe('webhook routes: before an endpoint exists', () => {
  it('GET and rotation are 404 WEBHOOK_ENDPOINT_NOT_FOUND; the delivery log is empty', async () => {
    expectError(await t.request('GET', '/api/v1/webhooks/endpoint', { token: keyB }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    expectError(await t.request('POST', '/api/v1/webhooks/endpoint/secret-rotations', { token: keyB }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    const list = await t.request('GET', '/api/v1/webhooks/deliveries', { token: keyB });
    expect(list).toMatchObject({ status: 200, body: { success: true, data: [] } });
  });
});

describe('PUT /api/v1/webhooks/endpoint validation', () => {
  const cases: Array<[string, unknown, string]> = [
    ['missing url', { events: ['payment.completed'] }, 'url'],
    ['non-http url', { ...valid, url: 'ftp://merchant.example/hooks' }, 'url'],
    ['relative url', { ...valid, url: '/hooks' }, 'url'],
    ['url over 2048 characters', { ...valid, url: `https://merchant.example/${'a'.repeat(2048)}` }, 'url'],
    ['no events', { ...valid, events: [] }, 'events'],
    ['unknown event', { ...valid, events: ['payment.refunded'] }, 'events.0'],
    ['repeated event', { ...valid, events: ['payment.completed', 'payment.completed'] }, 'events'],
    ['enabled not boolean', { ...valid, enabled: 'yes' }, 'enabled'],
    ['unknown field', { ...valid, secret: 'whsec_mine' }, 'secret'],
  ];
  it.each(cases)('%s: 400 VALIDATION_ERROR naming the field', async (_name, body, field) => {
    const res = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: keyA, body });
    expectError(res, 400, 'VALIDATION_ERROR', field);
  });

  it('a host that does not resolve is 422 WEBHOOK_URL_NOT_ALLOWED', async () => {
    const res = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: keyA, body: { ...valid, url: 'https://no-such-host.invalid/hooks' } });
    expectError(res, 422, 'WEBHOOK_URL_NOT_ALLOWED', 'url');
    expectError(await t.request('GET', '/api/v1/webhooks/endpoint', { token: keyA }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
  });
});

describe('another brand', () => {
  it("cannot read another brand's endpoint, deliveries or delivery: the same answer as not existing", async () => {
    const created = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: keyA, body: valid });
    expect(created.status).toBe(201);
    await emitPaymentCompleted(t, brandA, 1);
    const [{ id }] = await t.sql<{ id: string }>('SELECT id FROM webhook_deliveries WHERE brand_id = $1', [brandA]);

    const own = await t.request('GET', `/api/v1/webhooks/deliveries/${id}`, { token: keyA });
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({ id: Number(id), status: 'pending', attempts: 0, attempt_log: [] });

    const foreign = await t.request('GET', `/api/v1/webhooks/deliveries/${id}`, { token: keyB });
    const missing = await t.request('GET', '/api/v1/webhooks/deliveries/999999', { token: keyB });
    expectError(foreign, 404, 'DELIVERY_NOT_FOUND');
    expect({ ...foreign.body, request_id: null }).toEqual({ ...missing.body, request_id: null });
    expect((await t.request('GET', '/api/v1/webhooks/deliveries', { token: keyB })).body.data).toEqual([]);
    expectError(await t.request('GET', '/api/v1/webhooks/endpoint', { token: keyB }), 404, 'WEBHOOK_ENDPOINT_NOT_FOUND');
  });

  it('a malformed delivery id is 400 naming it', async () => {
    expectError(await t.request('GET', '/api/v1/webhooks/deliveries/abc', { token: keyA }), 400, 'VALIDATION_ERROR', 'id');
    expectError(await t.request('GET', '/api/v1/webhooks/deliveries/0', { token: keyA }), 400, 'VALIDATION_ERROR', 'id');
  });
});
