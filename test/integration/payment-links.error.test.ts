import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';

/** Bad input to the payment-link API: a 400 naming the field, and nothing written. Other brands' and modes' links do not exist. */

let t: TestContext;
let apiKey: string;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey } = await t.createBrand('Err Shop', { mode: 'test' }));
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const count = async () => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_links'))[0]!.n);

describe('creating a payment link: refused input', () => {
  it.each([
    ['no currency', { amount: '10.00' }, 'currency', 400],
    ['amount without two decimals', { amount: '10', currency: 'BDT' }, 'amount', 400],
    ['a zero amount', { amount: '0.00', currency: 'BDT' }, 'amount', 400],
    ['fixed amount with bounds', { amount: '10.00', min_amount: '5.00', currency: 'BDT' }, 'min_amount', 400],
    ['max below min', { min_amount: '50.00', max_amount: '40.00', currency: 'BDT' }, 'max_amount', 400],
    ['expiry in the past', { amount: '10.00', currency: 'BDT', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at', 400],
    ['a non-http success URL', { amount: '10.00', currency: 'BDT', success_url: 'javascript:alert(1)' }, 'success_url', 400],
    ['an unknown field', { amount: '10.00', currency: 'BDT', colour: 'red' }, null, 400],
    ['a currency no gateway takes', { amount: '10.00', currency: 'XYZ' }, 'currency', 422],
    ['a fixed amount above every gateway maximum', { amount: '99999.00', currency: 'BDT' }, 'amount', 422],
  ] as const)('%s', async (_name, body, field, status) => {
    const before = await count();
    const res = await t.request('POST', '/api/v1/payment-links', { token: apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.success).toBe(false);
    if (field) expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(await count()).toBe(before);
  });

  it('needs an API key', async () => {
    const res = await t.request('POST', '/api/v1/payment-links', { body: { amount: '10.00', currency: 'BDT' } });
    expect(res.status).toBe(401);
  });
});

describe('another brand\'s or mode\'s link is not found', () => {
  it('get and deactivate answer PAYMENT_LINK_NOT_FOUND and change nothing; a malformed id too', async () => {
    const link = (await t.request('POST', '/api/v1/payment-links', { token: apiKey, body: { amount: '10.00', currency: 'BDT' } })).body.data;
    const { apiKey: stranger } = await t.createBrand('Stranger', { mode: 'test' });
    for (const token of [stranger]) {
      expect((await t.request('GET', `/api/v1/payment-links/${link.id}`, { token })).body.errors[0].code).toBe('PAYMENT_LINK_NOT_FOUND');
      const off = await t.request('POST', `/api/v1/payment-links/${link.id}/deactivate`, { token });
      expect(off.status).toBe(404);
    }
    expect((await t.request('GET', `/api/v1/payment-links/${link.id}`, { token: apiKey })).body.data.active).toBe(true);
    expect((await t.request('GET', '/api/v1/payment-links/plink_nothex', { token: apiKey })).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/pay/plink_000000000000000000000000`)).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/pay/plink_000000000000000000000000/qr.svg`)).status).toBe(404);
  });
});
