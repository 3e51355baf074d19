import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';

let t: TestContext;
let apiKey: string;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('Customer Errors'));
  await seedGateway(t, 'bkash');
  await createPayment(t, apiKey, { customer: { name: 'Known', email: 'known@example.com', phone: '01712345678' } });
});
afterAll(() => t?.close());

function expectError(res: { status: number; body: any }, status: number, code: string, field: string | null) {
  expect(res.status).toBe(status);
  expect(res.body.errors).toContainEqual({ code, field, message: expect.any(String) });
}

describe('GET /api/v1/customers/{identifier} failures', () => {
  it.each([
    ['an unknown email', 'stranger@example.com'],
    ['an unknown phone', '01812345678'],
    ['a malformed email', 'known@'],
    ['a malformed phone', '12ab'],
    ['a too short number', '12345'],
    ['the email of the known customer as a phone', '1712345678@'],
  ])('%s: 404 CUSTOMER_NOT_FOUND', async (_name, identifier) => {
    const res = await t.request('GET', `/api/v1/customers/${encodeURIComponent(identifier)}`, { token: apiKey });
    expectError(res, 404, 'CUSTOMER_NOT_FOUND', null);
    expect(res.body.error).toBe('Customer not found');
  });

  it('without a key: 401', async () => {
    expectError(await t.request('GET', '/api/v1/customers/known%40example.com'), 401, 'UNAUTHORIZED', null);
    expectError(await t.request('GET', '/api/v1/customers'), 401, 'UNAUTHORIZED', null);
  });
});

describe('GET /api/v1/customers paging validation', () => {
  it.each([
    ['per_page=0', 'per_page'],
    ['per_page=101', 'per_page'],
    ['per_page=ten', 'per_page'],
    ['page=0', 'page'],
    ['page=-3', 'page'],
    ['page=2.0', 'page'],
    ['limit=5', 'limit'],
  ])('%s: 400 naming %s', async (qs, field) => {
    expectError(await t.request('GET', `/api/v1/customers?${qs}`, { token: apiKey }), 400, 'VALIDATION_ERROR', field);
  });
});
