import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { requestRefund, seedCompletedTransaction, seedGateway, seedTransaction, settleRefund } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { addMoney, compareMoney, subMoney } from '../../server/domain/money/decimal.ts';

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('Refund Errors'));
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

function expectError(res: { status: number; body: any }, status: number, code: string, field: string | null) {
  expect(res.status).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.errors).toContainEqual({ code, field, message: expect.any(String) });
}

async function refundCount(): Promise<number> {
  return Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM refunds'))[0]!.n);
}

describe('POST /api/v1/refunds failures', () => {
  it.each([
    ['0.00', 'Amount must be greater than zero'],
    ['-1.00', 'Amount must be greater than zero'],
    ['1.5', 'Amount must be a decimal string with exactly two decimal places, e.g. "1250.00"'],
    ['1e3', 'Amount must be a decimal string with exactly two decimal places, e.g. "1250.00"'],
    ['abc', 'Amount must be a decimal string with exactly two decimal places, e.g. "1250.00"'],
    [10, 'Amount must be a decimal string with exactly two decimal places, e.g. "1250.00"'],
  ])('amount %j: 400 with the right message', async (amount, message) => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash });
    const res = await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { trx_id: transaction.trxId, amount } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ code: 'VALIDATION_ERROR', field: 'amount', message }]);
  });

  it('missing trx_id, unknown fields, reason too long: 400 naming each', async () => {
    expectError(await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { amount: '1.00' } }), 400, 'VALIDATION_ERROR', 'trx_id');
    expectError(await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { trx_id: 'X', amount: '1.00', notify: true } }), 400, 'VALIDATION_ERROR', 'notify');
    expectError(await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { trx_id: 'X', amount: '1.00', reason: 'r'.repeat(501) } }), 400, 'VALIDATION_ERROR', 'reason');
  });

  it('unknown transaction: 404 PAYMENT_NOT_FOUND', async () => {
    const before = await refundCount();
    expectError(await requestRefund(t, apiKey, { trx_id: 'TRX0000000000000000', amount: '1.00' }), 404, 'PAYMENT_NOT_FOUND', 'trx_id');
    expect(await refundCount()).toBe(before);
  });

  it.each(['pending', 'awaiting_verification', 'failed'] as const)('a %s transaction: 409 TRANSACTION_NOT_REFUNDABLE', async (status) => {
    const { transaction } = await seedTransaction(t, { apiKey, gateway: bkash, status });
    const before = await refundCount();
    expectError(await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '1.00' }), 409, 'TRANSACTION_NOT_REFUNDABLE', 'trx_id');
    expect(await refundCount()).toBe(before);
  });

  it('more than the amount: 422 REFUND_EXCEEDS_AVAILABLE', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '100.00' });
    expectError(await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '100.01' }), 422, 'REFUND_EXCEEDS_AVAILABLE', 'amount');
    // A completed refund counts against the amount like a pending one.
    const r = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '99.99' });
    await settleRefund(t, r.body.data.id, 'completed');
    expectError(await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '0.02' }), 422, 'REFUND_EXCEEDS_AVAILABLE', 'amount');
    expect((await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '0.01' })).status).toBe(201);
  });

  it('a gateway reference shared by two of the brand’s transactions is ambiguous: 400 on trx_id', async () => {
    const nagad = await seedGateway(t, 'nagad');
    await seedCompletedTransaction(t, { apiKey, gateway: bkash, gatewayTrxId: 'SHARED0001' });
    await seedCompletedTransaction(t, { apiKey, gateway: nagad, gatewayTrxId: 'SHARED0001' });
    expectError(await requestRefund(t, apiKey, { trx_id: 'SHARED0001', amount: '1.00' }), 400, 'VALIDATION_ERROR', 'trx_id');
  });
});

describe('concurrent refunds never overdraw', () => {
  it('ten requests of 30.00 on 100.00: exactly three win and the sum stays within the amount', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '100.00' });
    const results = await Promise.all(Array.from({ length: 10 }, () => requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '30.00' })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 422, 422, 422, 422, 422, 422, 422]);
    for (const r of results.filter((x) => x.status === 422)) expect(r.body.errors[0].code).toBe('REFUND_EXCEEDS_AVAILABLE');
    const [sum] = await t.sql<{ total: string; n: string }>(
      `SELECT sum(amount)::text AS total, count(*) AS n FROM refunds WHERE transaction_id = $1 AND status <> 'failed'`,
      [transaction.id],
    );
    expect(sum).toEqual({ total: '90.00', n: '3' });
  });

  it('the same race with an Idempotency-Key on each request (as the SDK sends them): still exactly three', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '100.00' });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '30.00' }, { 'idempotency-key': `race-${transaction.id}-${i}` })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 422)).toHaveLength(7);
    const [sum] = await t.sql<{ total: string }>(`SELECT sum(amount)::text AS total FROM refunds WHERE transaction_id = $1`, [transaction.id]);
    expect(sum!.total).toBe('90.00');
  });

  it('ten requests of mixed amounts on 100.00: the sum never exceeds the amount and no refused one would have fitted', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '100.00' });
    const amounts = ['10.01', '25.00', '33.33', '0.01', '50.00', '12.50', '40.00', '9.99', '20.00', '45.45'];
    const results = await Promise.all(amounts.map((amount) => requestRefund(t, apiKey, { trx_id: transaction.trxId, amount })));
    expect(results.every((r) => r.status === 201 || r.status === 422)).toBe(true);
    const won = results.filter((r) => r.status === 201).map((r) => r.body.data.amount as string);
    expect(won.length).toBeGreaterThan(0);
    const [sum] = await t.sql<{ total: string }>(`SELECT COALESCE(sum(amount), 0)::text AS total FROM refunds WHERE transaction_id = $1`, [transaction.id]);
    expect(sum!.total).toBe(won.reduce(addMoney, '0.00'));
    expect(compareMoney(sum!.total, '100.00')).toBeLessThanOrEqual(0);
    const left = subMoney('100.00', sum!.total);
    results.forEach((r, i) => {
      if (r.status === 422) expect(compareMoney(amounts[i]!, left)).toBe(1);
    });
  });
});

describe('GET /api/v1/refunds/{trx_id} failures', () => {
  it('unknown transaction: 404 PAYMENT_NOT_FOUND', async () => {
    expectError(await t.request('GET', '/api/v1/refunds/TRXNOPE', { token: apiKey }), 404, 'PAYMENT_NOT_FOUND', null);
    expectError(await t.request('GET', `/api/v1/refunds/${'x'.repeat(300)}`, { token: apiKey }), 404, 'PAYMENT_NOT_FOUND', null);
  });

  it('a transaction without refunds: 404 REFUND_NOT_FOUND', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, gatewayTrxId: 'NOREFUND01' });
    expectError(await t.request('GET', `/api/v1/refunds/${transaction.trxId}`, { token: apiKey }), 404, 'REFUND_NOT_FOUND', null);
    expectError(await t.request('GET', '/api/v1/refunds/NOREFUND01', { token: apiKey }), 404, 'REFUND_NOT_FOUND', null);
  });
});

describe('GET /api/v1/refunds query validation', () => {
  it.each([
    ['per_page=0', 'per_page'],
    ['per_page=101', 'per_page'],
    ['per_page=-1', 'per_page'],
    ['per_page=1.5', 'per_page'],
    ['per_page=abc', 'per_page'],
    ['page=0', 'page'],
    ['page=1e2', 'page'],
    ['page=1&page=2', 'page'],
    ['status=refunded', 'status'],
    ['transaction_id=0', 'transaction_id'],
    ['transaction_id=abc', 'transaction_id'],
    ['from=2026-02-30', 'from'],
    ['from=2026-3-1', 'from'],
    ['from=01-03-2026', 'from'],
    ['to=2026-13-01', 'to'],
    ['to=2026-03-01T00:00:00Z', 'to'],
    ['from=2026-03-02&to=2026-03-01', 'to'],
    ['sort=asc', 'sort'],
  ])('%s: 400 naming %s', async (qs, field) => {
    const res = await t.request('GET', `/api/v1/refunds?${qs}`, { token: apiKey });
    expectError(res, 400, 'VALIDATION_ERROR', field);
  });

  it('per_page 1 and 100 are accepted', async () => {
    expect((await t.request('GET', '/api/v1/refunds?per_page=1', { token: apiKey })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/refunds?per_page=100', { token: apiKey })).status).toBe(200);
  });

  it('without a key: 401', async () => {
    expectError(await t.request('GET', '/api/v1/refunds'), 401, 'UNAUTHORIZED', null);
    expectError(await t.request('POST', '/api/v1/refunds', { body: { trx_id: 'X', amount: '1.00' } }), 401, 'UNAUTHORIZED', null);
  });
});
