import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../server/domain/brands/service.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { completeTransaction, startTransaction } from '../../server/domain/payments/transactions.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedCompletedTransaction, seedGateway, seedTransaction } from '../support/seed.ts';

/** The merchant payments API: list and search, cancel, refunds by payment id. */

let t: TestContext;
let brandId: number;
let apiKey: string;
let testKey: string;
let otherKey: string;
let bkash: GatewayView;
let nagad: GatewayView;

const em = () => t.runtime.deps.db;
const list = (query: string, token = apiKey) => t.request('GET', `/api/v1/payments${query}`, { token });
const cancel = (paymentId: string, token = apiKey, headers: Record<string, string> = {}) =>
  t.request('POST', `/api/v1/payments/${paymentId}/cancel`, { token, headers });

beforeAll(async () => {
  t = await startTestServer();
  ({ brandId, apiKey } = await t.createBrand('List Shop'));
  testKey = (await createApiKey(em(), brandId, { name: 'test key', mode: 'test' })).key;
  ({ apiKey: otherKey } = await t.createBrand('Other Shop'));
  bkash = await seedGateway(t, 'bkash');
  nagad = await seedGateway(t, 'nagad');
});
afterAll(() => t?.close());

describe('GET /api/v1/payments', () => {
  it('lists newest first with the pagination envelope, masked customers, and only the key\'s brand and mode', async () => {
    const a = await createPayment(t, apiKey, { reference: 'list-a', customer: { name: 'Rahim Uddin', email: 'rahim@example.com', phone: '01711223344' } });
    const b = await createPayment(t, apiKey, { reference: 'list-b' });
    await createPayment(t, testKey, { reference: 'list-test' });
    await createPayment(t, otherKey, { reference: 'list-other' });
    const res = await list('?per_page=2');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.map((p: any) => p.payment_id)).toEqual([b.payment_id, a.payment_id]);
    expect(res.body.meta).toEqual({ page: 1, per_page: 2, total: 2, total_pages: 1 });
    expect(res.body.data[1]).toMatchObject({
      object: 'payment_intent',
      status: 'pending',
      reference: 'list-a',
      livemode: true,
      customer: { name: 'Rahim Uddin', email_masked: expect.stringMatching(/^r\*+@example\.com$/), phone_masked: expect.stringContaining('*') },
    });
    expect(JSON.stringify(res.body)).not.toContain('rahim@example.com');
    expect(res.body.data[0].customer).toBeNull();
    const test = await list('', testKey);
    expect(test.body.data.map((p: any) => p.reference)).toEqual(['list-test']);
    expect(test.body.data[0].livemode).toBe(false);
    const second = await list('?per_page=1&page=2');
    expect(second.body.data.map((p: any) => p.payment_id)).toEqual([a.payment_id]);
    expect(second.body.meta).toEqual({ page: 2, per_page: 1, total: 2, total_pages: 2 });
  });

  it('filters by status, gateway, reference, customer email and phone (keyed hash), and created range', async () => {
    const done = await seedCompletedTransaction(t, { apiKey, gateway: bkash, customer: { email: 'Karim@Example.com' } });
    const waiting = await seedTransaction(t, { apiKey, gateway: nagad, status: 'awaiting_verification', customer: { phone: '+8801811000111' } });
    const ids = (res: { body: any }) => res.body.data.map((p: any) => p.payment_id);
    expect(ids(await list('?status=completed'))).toEqual([done.paymentId]);
    expect(ids(await list('?status=awaiting_verification'))).toEqual([waiting.paymentId]);
    expect(ids(await list(`?gateway=${nagad.code}`))).toEqual([waiting.paymentId]);
    expect(ids(await list(`?gateway=${bkash.code}&status=completed`))).toEqual([done.paymentId]);
    expect(ids(await list('?customer_email=%20karim@EXAMPLE.com'))).toEqual([done.paymentId]);
    expect(ids(await list('?customer_phone=01811000111'))).toEqual([waiting.paymentId]);
    expect(ids(await list('?customer_email=nobody@example.com'))).toEqual([]);
    expect(ids(await list('?reference=list-a'))).toHaveLength(1);
    const today = new Date().toISOString().slice(0, 10);
    expect((await list(`?from=${today}&to=${today}`)).body.meta.total).toBe(4);
    expect((await list('?to=2020-01-01')).body.meta.total).toBe(0);
    // The customer of another brand with the same email is not found through this brand's hash.
    await createPayment(t, otherKey, { customer: { email: 'karim@example.com' } });
    expect(ids(await list('?customer_email=karim@example.com', otherKey))).toHaveLength(1);
    expect(ids(await list('?customer_email=karim@example.com'))).toEqual([done.paymentId]);
  });
});

describe('POST /api/v1/payments/{payment_id}/cancel', () => {
  it('cancels an intent without a transaction, once, with one payment.canceled in the same transaction', async () => {
    const p = await createPayment(t, apiKey);
    const res = await cancel(p.payment_id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ payment_id: p.payment_id, object: 'payment_intent', status: 'canceled' });
    const again = await cancel(p.payment_id);
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('canceled');
    const events = await t.sql<{ payload: string }>(`SELECT payload FROM webhook_events WHERE event = 'payment.canceled'`);
    const mine = events.map((e) => JSON.parse(e.payload)).filter((e) => e.data.payment_id === p.payment_id);
    expect(mine).toHaveLength(1);
    expect(mine[0].data).toMatchObject({ status: 'canceled', trx_id: null });
    expect((await t.request('GET', `/api/v1/payments/${p.payment_id}`, { token: apiKey })).body.data.status).toBe('canceled');
    expect((await list('?status=canceled')).body.data.map((x: any) => x.payment_id)).toContain(p.payment_id);
    // The checkout no longer takes it.
    const checkout = await t.request('GET', `/api/checkout/v1/payments/${p.payment_id}`);
    expect(checkout.body.data).toMatchObject({ status: 'canceled', payable: false, gateways: [] });
    const start = await t.request('POST', `/api/checkout/v1/payments/${p.payment_id}/transactions`, { body: { gateway: bkash.code } });
    expect(start.status).toBe(409);
    expect(start.body.errors[0].code).toBe('INVALID_STATE');
    const page = await fetch(`${t.baseUrl}/checkout/${p.payment_id}`);
    const html = await page.text();
    expect(html).toContain('Payment canceled');
    expect(html).not.toContain('class="pay-form"');
  });

  it('fails a pending transaction (a gateway chosen, nothing reported) with the intent', async () => {
    const { paymentId, transaction } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'pending' });
    const res = await cancel(paymentId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ object: 'transaction', status: 'canceled', trx_id: transaction.trxId });
    const [row] = await t.sql<{ status: string; failure_reason: string }>('SELECT status, failure_reason FROM transactions WHERE id = $1', [transaction.id]);
    expect(row).toEqual({ status: 'failed', failure_reason: 'Payment canceled by the merchant' });
    // An SMS or an operator arriving later cannot complete it any more.
    await expect(completeTransaction(em(), transaction.id, { source: 'sms', gatewayTrxId: 'LATE000001' })).rejects.toMatchObject({ code: 'INVALID_STATE' });
  });

  it('honours Idempotency-Key', async () => {
    const p = await createPayment(t, apiKey);
    const first = await cancel(p.payment_id, apiKey, { 'Idempotency-Key': `cancel-${p.payment_id}` });
    const replay = await cancel(p.payment_id, apiKey, { 'Idempotency-Key': `cancel-${p.payment_id}` });
    expect(first.status).toBe(200);
    expect(replay.body).toEqual(first.body);
  });

  it('races an SMS completion safely: exactly one wins, and the losing side changes nothing', async () => {
    for (let i = 0; i < 6; i++) {
      const p = await createPayment(t, apiKey);
      const started = await startTransaction(em(), t.runtime.deps.crypto, { paymentId: p.payment_id, gatewayCode: bkash.code });
      const [c, done] = await Promise.allSettled([
        cancel(p.payment_id),
        completeTransaction(em(), started.id, { source: 'sms', gatewayTrxId: `RACE${i}${p.payment_id.slice(0, 6).toUpperCase()}` }),
      ]);
      const [intent] = await t.sql<{ status: string }>('SELECT status FROM payment_intents WHERE uuid = $1', [p.payment_id]);
      const events = await t.sql<{ event: string }>(`SELECT event FROM webhook_events WHERE payload::jsonb -> 'data' ->> 'payment_id' = $1`, [p.payment_id]);
      if (intent!.status === 'completed') {
        expect(c.status === 'fulfilled' && c.value.status).toBe(409);
        expect(events.map((e) => e.event)).toEqual(['payment.completed']);
      } else {
        expect(intent!.status).toBe('canceled');
        expect(done.status).toBe('rejected');
        expect(events.map((e) => e.event)).toEqual(['payment.canceled']);
      }
    }
  });
});

describe('cancel against the customer reporting payment at the same moment', () => {
  it('either the report wins (cancel refused, awaiting verification) or the cancel wins (report refused); never both', async () => {
    for (let i = 0; i < 8; i++) {
      const { payment_id: paymentId } = await createPayment(t, apiKey);
      // The customer reports paying the way the checkout page does: choosing the gateway with the id it gave them.
      const report = () =>
        t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: `SUB${i}${paymentId.slice(0, 6).toUpperCase()}` } });
      const [c, s] = await Promise.all([cancel(paymentId), report()]);
      const [intent] = await t.sql<{ status: string }>('SELECT status FROM payment_intents WHERE uuid = $1', [paymentId]);
      const trx = await t.sql<{ status: string }>('SELECT t.status FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1', [paymentId]);
      if (intent!.status === 'canceled') {
        expect(c.status).toBe(200);
        expect([s.status, s.body.errors?.[0]?.code]).toEqual([409, 'INVALID_STATE']);
        expect(trx).toEqual([]);
      } else {
        expect(intent!.status).toBe('pending');
        expect(s.status, JSON.stringify(s.body)).toBe(201);
        expect(trx).toEqual([{ status: 'awaiting_verification' }]);
        expect([c.status, c.body.errors?.[0]?.code]).toEqual([409, 'PAYMENT_NOT_CANCELABLE']);
      }
    }
  });
});

describe('POST /api/v1/refunds with payment_id', () => {
  it('refunds the completed transaction of a payment', async () => {
    const { paymentId, transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '300.00' });
    const res = await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { payment_id: paymentId, amount: '100.00', reason: 'damaged' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ transaction_id: transaction.id, trx_id: transaction.trxId, amount: '100.00', status: 'pending' });
    // Same rules as by trx_id: the refundable amount is shared.
    const over = await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { payment_id: paymentId, amount: '200.01' } });
    expect(over.status).toBe(422);
    expect(over.body.errors[0]).toMatchObject({ code: 'REFUND_EXCEEDS_AVAILABLE', field: 'amount' });
  });

  it('finds the completed transaction also after an earlier failed attempt', async () => {
    const p = await createPayment(t, apiKey, { amount: '50.00' });
    const first = await startTransaction(em(), t.runtime.deps.crypto, { paymentId: p.payment_id, gatewayCode: bkash.code });
    const { failTransaction } = await import('../../server/domain/payments/transactions.ts');
    await failTransaction(em(), first.id, { reason: 'declined' });
    const second = await startTransaction(em(), t.runtime.deps.crypto, { paymentId: p.payment_id, gatewayCode: nagad.code, gatewayTrxId: 'NGD0000099' });
    await completeTransaction(em(), second.id, { source: 'admin' });
    const res = await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { payment_id: p.payment_id, amount: '50.00' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.transaction_id).toBe(second.id);
  });
});
