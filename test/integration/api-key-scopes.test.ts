import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedCompletedTransaction, seedGateway } from '../support/seed.ts';
import { adminRequest, auditRows } from './admin-support.ts';

/** API key scopes and expiry (README, "API key scopes"). */

let t: TestContext;
let brandId: number;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  brandId = (await t.createBrand('Scoped Shop')).brandId;
});
afterAll(() => t?.close());

async function keyWith(body: Record<string, unknown>): Promise<{ key: string; id: number }> {
  const res = await adminRequest(t, 'POST', `/brands/${brandId}/api-keys`, { name: 'scoped', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

const payment = { amount: '120.00', currency: 'BDT' };

describe('API key scopes', () => {
  it('a read-only key reads and is refused every change with 403 naming the missing scope', async () => {
    const { key } = await keyWith({ scopes: ['read'] });
    expect((await t.request('GET', '/api/v1/payments', { token: key })).status).toBe(200);
    const create = await t.request('POST', '/api/v1/payments', { token: key, body: payment });
    expect(create.status).toBe(403);
    expect(create.body.errors[0].code).toBe('INSUFFICIENT_SCOPE');
    expect(create.body.errors[0].message).toContain('`write`');
    const refund = await t.request('POST', '/api/v1/refunds', { token: key, body: { trx_id: 'TRX1', amount: '1.00' } });
    expect([refund.status, refund.body.errors[0].code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect(refund.body.errors[0].message).toContain('`refunds`');
    const hooks = await t.request('GET', '/api/v1/webhooks/endpoints', { token: key });
    expect([hooks.status, hooks.body.errors[0].code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect(hooks.body.errors[0].message).toContain('`webhooks`');
    expect(await t.sql('SELECT id FROM payment_intents WHERE brand_id = $1', [brandId])).toEqual([]);
  });

  it('write and refunds without read: creates payments and refunds, reads nothing', async () => {
    const gateway = await seedGateway(t, 'bkash');
    const { key } = await keyWith({ scopes: ['write', 'refunds'] });
    expect((await t.request('POST', '/api/v1/payments', { token: key, body: payment })).status).toBe(201);
    const full = (await keyWith({})).key;
    const done = await seedCompletedTransaction(t, { apiKey: full, gateway, amount: '300.00' });
    const refund = await t.request('POST', '/api/v1/refunds', { token: key, body: { trx_id: done.transaction.trxId, amount: '100.00' } });
    expect(refund.status).toBe(201);
    const read = await t.request('GET', `/api/v1/payments/${done.paymentId}`, { token: key });
    expect([read.status, read.body.errors[0].code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
  });

  it('a key without scopes may do everything, as every key made before scopes', async () => {
    const { key } = await keyWith({});
    expect((await t.request('POST', '/api/v1/payments', { token: key, body: payment })).status).toBe(201);
    expect((await t.request('GET', '/api/v1/webhooks/endpoints', { token: key })).status).toBe(200);
  });

  it('an expired key is refused (401) like a revoked one; the list shows scopes, expiry and last use', async () => {
    const soon = new Date(Date.now() + 3_600_000).toISOString();
    const { key, id } = await keyWith({ scopes: ['read'], expires_at: soon });
    expect((await t.request('GET', '/api/v1/payments', { token: key })).status).toBe(200);
    const listed = (await adminRequest(t, 'GET', `/brands/${brandId}/api-keys`)).body.data.find((k: { id: number }) => k.id === id);
    expect(listed).toMatchObject({ scopes: ['read'], expires_at: soon, last_used_at: expect.any(String) });
    expect((await auditRows(t, 'api_key.create')).find((a) => a.target_id === String(id))?.after).toMatchObject({ scopes: ['read'], expires_at: soon });
    await t.sql("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    const expired = await t.request('GET', '/api/v1/payments', { token: key });
    expect([expired.status, expired.body.errors[0].code]).toEqual([401, 'UNAUTHORIZED']);
  });

  it('refuses scopes and expiries that cannot be, naming the field, and creates no key', async () => {
    const before = (await adminRequest(t, 'GET', `/brands/${brandId}/api-keys`)).body.data.length;
    for (const [body, field] of [
      [{ scopes: [] }, 'scopes'],
      [{ scopes: ['admin'] }, 'scopes.0'],
      [{ scopes: ['read', 'read'] }, 'scopes'],
      [{ expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      [{ expires_at: 'tomorrow' }, 'expires_at'],
    ] as const) {
      const res = await adminRequest(t, 'POST', `/brands/${brandId}/api-keys`, { name: 'bad', ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
    expect((await adminRequest(t, 'GET', `/brands/${brandId}/api-keys`)).body.data.length).toBe(before);
  });
});
