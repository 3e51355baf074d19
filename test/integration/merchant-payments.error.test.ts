import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../server/domain/brands/service.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedCompletedTransaction, seedGateway, seedTransaction } from '../support/seed.ts';

/** The merchant payments API refuses bad input with a 400 naming the field, and writes nothing it should not. */

let t: TestContext;
let apiKey: string;
let testKey: string;
let otherKey: string;
let bkash: GatewayView;

const em = () => t.runtime.deps.db;

function expectError(res: { status: number; body: any }, status: number, code: string, field: string | null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.errors[0]).toMatchObject({ code, field });
}

beforeAll(async () => {
  t = await startTestServer();
  let brandId: number;
  ({ brandId, apiKey } = await t.createBrand('Strict Shop'));
  testKey = (await createApiKey(em(), brandId, { name: 'test key', mode: 'test' })).key;
  ({ apiKey: otherKey } = await t.createBrand('Other Shop'));
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

describe('GET /api/v1/payments: bad filters', () => {
  it.each([
    ['page=0', 'page'],
    ['per_page=101', 'per_page'],
    ['per_page=1.5', 'per_page'],
    ['status=paid', 'status'],
    ['gateway=BK%20ASH', 'gateway'],
    ['from=2026-02-30', 'from'],
    ['to=yesterday', 'to'],
    ['from=2026-05-02&to=2026-05-01', 'to'],
    ['customer_email=not-an-email', 'customer_email'],
    ['customer_phone=12', 'customer_phone'],
    ['customer_phone=abcdefgh', 'customer_phone'],
    ['reference=', 'reference'],
    ['sort=asc', 'sort'],
  ])('%s: 400 naming %s', async (query, field) => {
    const res = await t.request('GET', `/api/v1/payments?${query}`, { token: apiKey });
    expectError(res, 400, 'VALIDATION_ERROR', field);
  });

  it('needs an API key', async () => {
    expectError(await t.request('GET', '/api/v1/payments'), 401, 'UNAUTHORIZED', null);
  });
});

describe('POST /api/v1/payments/{payment_id}/cancel: refusals', () => {
  const cancel = (id: string, token = apiKey) => t.request('POST', `/api/v1/payments/${id}/cancel`, { token });
  const events = async (paymentId: string) =>
    (await t.sql<{ event: string }>(`SELECT event FROM webhook_events WHERE payload::jsonb -> 'data' ->> 'payment_id' = $1`, [paymentId])).map((e) => e.event);

  it('awaiting verification: 409 PAYMENT_NOT_CANCELABLE (money may have moved), nothing changes', async () => {
    const { paymentId, transaction } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification' });
    const res = await cancel(paymentId);
    expectError(res, 409, 'PAYMENT_NOT_CANCELABLE', null);
    expect(res.body.error).toMatch(/verified or rejected/);
    const [row] = await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [transaction.id]);
    expect(row!.status).toBe('awaiting_verification');
    expect(await events(paymentId)).toEqual([]);
  });

  it('completed: 409 PAYMENT_NOT_CANCELABLE, pointing to a refund', async () => {
    const { paymentId } = await seedCompletedTransaction(t, { apiKey, gateway: bkash });
    const res = await cancel(paymentId);
    expectError(res, 409, 'PAYMENT_NOT_CANCELABLE', null);
    expect(res.body.error).toMatch(/refund/);
    expect(await events(paymentId)).toEqual(['payment.completed']);
  });

  it('expired: 409 PAYMENT_NOT_CANCELABLE', async () => {
    const p = await createPayment(t, apiKey, { expires_in: 60 });
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second', created_at = now() - interval '2 minutes' WHERE uuid = $1`, [p.payment_id]);
    expectError(await cancel(p.payment_id), 409, 'PAYMENT_NOT_CANCELABLE', null);
  });

  it("another brand's, the other mode's, unknown and malformed ids: 404 PAYMENT_NOT_FOUND", async () => {
    const p = await createPayment(t, apiKey);
    expectError(await cancel(p.payment_id, otherKey), 404, 'PAYMENT_NOT_FOUND', null);
    expectError(await cancel(p.payment_id, testKey), 404, 'PAYMENT_NOT_FOUND', null);
    expectError(await cancel('00000000-0000-4000-8000-000000000000'), 404, 'PAYMENT_NOT_FOUND', null);
    expectError(await cancel('not-a-uuid'), 404, 'PAYMENT_NOT_FOUND', null);
    const [row] = await t.sql<{ status: string }>('SELECT status FROM payment_intents WHERE uuid = $1', [p.payment_id]);
    expect(row!.status).toBe('pending');
  });

  it('a body with members: 400', async () => {
    const p = await createPayment(t, apiKey);
    const res = await t.request('POST', `/api/v1/payments/${p.payment_id}/cancel`, { token: apiKey, body: { reason: 'x' } });
    expect(res.status).toBe(400);
  });
});

describe('POST /api/v1/refunds: trx_id or payment_id', () => {
  const refund = (body: unknown, token = apiKey) => t.request('POST', '/api/v1/refunds', { token, body });
  const refundCount = async () => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM refunds'))[0]!.n);

  it('neither: 400 naming trx_id; both: 400 naming payment_id; a malformed payment_id: 400 naming it', async () => {
    const { paymentId, transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash });
    const before = await refundCount();
    expectError(await refund({ amount: '1.00' }), 400, 'VALIDATION_ERROR', 'trx_id');
    expectError(await refund({ trx_id: transaction.trxId, payment_id: paymentId, amount: '1.00' }), 400, 'VALIDATION_ERROR', 'payment_id');
    expectError(await refund({ payment_id: 'nope', amount: '1.00' }), 400, 'VALIDATION_ERROR', 'payment_id');
    expect(await refundCount()).toBe(before);
  });

  it("unknown, another brand's or the other mode's payment: 404 PAYMENT_NOT_FOUND on payment_id", async () => {
    const { paymentId } = await seedCompletedTransaction(t, { apiKey, gateway: bkash });
    expectError(await refund({ payment_id: '00000000-0000-4000-8000-000000000000', amount: '1.00' }), 404, 'PAYMENT_NOT_FOUND', 'payment_id');
    expectError(await refund({ payment_id: paymentId, amount: '1.00' }, otherKey), 404, 'PAYMENT_NOT_FOUND', 'payment_id');
    expectError(await refund({ payment_id: paymentId, amount: '1.00' }, testKey), 404, 'PAYMENT_NOT_FOUND', 'payment_id');
  });

  it('a payment not paid yet (no transaction, or an open one): 409 TRANSACTION_NOT_REFUNDABLE on payment_id', async () => {
    const p = await createPayment(t, apiKey);
    expectError(await refund({ payment_id: p.payment_id, amount: '1.00' }), 409, 'TRANSACTION_NOT_REFUNDABLE', 'payment_id');
    const { paymentId } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification' });
    expectError(await refund({ payment_id: paymentId, amount: '1.00' }), 409, 'TRANSACTION_NOT_REFUNDABLE', 'payment_id');
  });
});
