import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedCompletedTransaction, seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { createApiKey, revokeApiKey } from '../../server/domain/brands/service.ts';
import { OWNPAY_AMOUNT_MESSAGE } from '../../contract/ownpay/index.ts';
import { expectOwnpayShape, ownpayShapes } from '../support/ownpay-shapes.ts';

/** The OwnPay dialect's failures: the native error envelope, codes, statuses and scoping. */

let t: TestContext;
let brandId: number;
let nativeKey: string;
let opKey: string;
let opTestKey: string;
let other: { brandId: number; apiKey: string };
let bkash: GatewayView;

beforeAll(async () => {
  t = await startTestServer();
  ({ brandId, apiKey: nativeKey } = await t.createBrand('OwnPay Errors'));
  opKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'op', dialect: 'ownpay' })).key;
  opTestKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'op test', mode: 'test', dialect: 'ownpay' })).key;
  other = await t.createBrand('Someone Else');
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const create = (body: unknown, token = opKey) => t.request('POST', '/api/v1/payments', { token, body });

describe('POST /api/v1/payments', () => {
  it.each([['500.555'], ['-5'], ['0'], ['0.00'], ['1e3'], ['abc'], [''], [true], ['1234567890123']])('refuses amount %j with a 400 naming amount', async (amount) => {
    const res = await create({ amount, currency: 'BDT' });
    expect(res.status).toBe(400);
    expectOwnpayShape(res.body, ownpayShapes.Error);
    expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'amount' });
  });

  it('says what an amount looks like', async () => {
    const res = await create({ amount: '12.345', currency: 'BDT' });
    expect(res.body.errors[0].message).toBe(OWNPAY_AMOUNT_MESSAGE);
  });

  it.each([
    [{ currency: 'BDT' }, 'amount'],
    [{ amount: '500' }, 'currency'],
    [{ amount: '500', currency: 'TAKA' }, 'currency'],
    [{ amount: '500', currency: 'BDT', redirect_url: 'javascript:alert(1)' }, 'redirect_url'],
    [{ amount: '500', currency: 'BDT', callback_url: 'not a url' }, 'callback_url'],
    [{ amount: '500', currency: 'BDT', customer_email: 'nope' }, 'customer.email'],
  ])('refuses %j naming %s', async (body, field) => {
    const res = await create(body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('an amount no gateway takes is the native refusal', async () => {
    const res = await create({ amount: '99999999', currency: 'BDT' });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('AMOUNT_EXCEEDS_MAXIMUM');
  });

  it('malformed JSON is the native envelope', async () => {
    const res = await t.request('POST', '/api/v1/payments', { token: opKey, rawBody: '{"amount":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe('MALFORMED_JSON');
  });
});

describe('credentials and scope', () => {
  it('an unknown or revoked op_ key is 401, as a native one', async () => {
    const unknown = await t.request('GET', '/api/v1/health', { token: `op_live_${'x'.repeat(40)}` });
    expect(unknown.status).toBe(401);
    expect(unknown.body.errors[0].code).toBe('UNAUTHORIZED');
    const made = await createApiKey(t.runtime.deps.db, brandId, { name: 'soon revoked', dialect: 'ownpay' });
    await revokeApiKey(t.runtime.deps.db, brandId, made.apiKey.id);
    expect((await create({ amount: '500', currency: 'BDT' }, made.key)).status).toBe(401);
    expect((await t.request('GET', '/api/v1/transactions')).status).toBe(404);
  });

  it('another brand\'s payment or transaction is not found', async () => {
    const theirs = await create({ amount: '500.00', currency: 'BDT' }, other.apiKey);
    expect(theirs.status).toBe(201);
    const res = await t.request('GET', `/api/v1/payments/${theirs.body.data.payment_id}`, { token: opKey });
    expect(res.status).toBe(404);
    expect(res.body.errors[0].code).toBe('PAYMENT_NOT_FOUND');
    const { transaction } = await seedCompletedTransaction(t, { apiKey: other.apiKey, gateway: bkash });
    expect((await t.request('GET', `/api/v1/transactions/${transaction.trxId}`, { token: opKey })).status).toBe(404);
    const refund = await t.request('POST', '/api/v1/refunds', { token: opKey, body: { transaction_id: transaction.id, amount: '1' } });
    expect(refund.status).toBe(404);
    expect(refund.body.errors[0].code).toBe('PAYMENT_NOT_FOUND');
  });

  it('a test key sees only test objects', async () => {
    const live = await create({ amount: '500', currency: 'BDT' });
    expect((await t.request('GET', `/api/v1/payments/${live.body.data.payment_id}`, { token: opTestKey })).status).toBe(404);
    const { transaction } = await seedCompletedTransaction(t, { apiKey: nativeKey, gateway: bkash });
    expect((await t.request('GET', `/api/v1/transactions/${transaction.trxId}`, { token: opTestKey })).status).toBe(404);
  });

  it('a native key does not reach the dialect-only routes; on a shared path it reaches the native route', async () => {
    expect((await t.request('GET', '/api/v1/transactions', { token: nativeKey })).status).toBe(404);
    expect((await t.request('GET', '/api/v1/health', { token: nativeKey })).status).toBe(404);
    // POST /customers exists in both: a native key gets the native create (the whole customer, native 409 codes).
    const native = await t.request('POST', '/api/v1/customers', { token: nativeKey, body: { name: 'x', email: 'x@example.com' } });
    expect(native.status).toBe(201);
    expect(native.body.data).toMatchObject({ name: 'x', email: 'x@example.com', livemode: true });
  });
});

describe('POST /api/v1/customers', () => {
  it('409 when the brand already has the email', async () => {
    const first = await t.request('POST', '/api/v1/customers', { token: opKey, body: { name: 'Bob', email: 'bob@example.com' } });
    expect(first.status).toBe(201);
    const again = await t.request('POST', '/api/v1/customers', { token: opKey, body: { name: 'Robert', email: ' BOB@example.com ' } });
    expect(again.status).toBe(409);
    expectOwnpayShape(again.body, ownpayShapes.Error);
    expect(again.body.errors[0]).toMatchObject({ code: 'CONFLICT', field: 'email' });
    // Another brand may have the same customer.
    const elsewhere = await createApiKey(t.runtime.deps.db, other.brandId, { name: 'op', dialect: 'ownpay' });
    expect((await t.request('POST', '/api/v1/customers', { token: elsewhere.key, body: { name: 'Bob', email: 'bob@example.com' } })).status).toBe(201);
  });

  it.each([
    [{ email: 'nameless@example.com' }, 'name'],
    [{ name: 'No Contact' }, 'email'],
    [{ name: 'Bad', email: 'not-an-email' }, 'email'],
  ])('refuses %j naming %s', async (body, field) => {
    const res = await t.request('POST', '/api/v1/customers', { token: opKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors[0].field).toBe(field);
  });
});

describe('GET /api/v1/transactions', () => {
  it.each([['per_page=0', 'per_page'], ['per_page=101', 'per_page'], ['status=paid', 'status'], ['from=2026-13-01', 'from'], ['from=2026-05-02&to=2026-05-01', 'to']])(
    '%s is a 400 naming %s',
    async (q, field) => {
      const res = await t.request('GET', `/api/v1/transactions?${q}`, { token: opKey });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    },
  );

  it('an unknown reference is TRANSACTION_NOT_FOUND', async () => {
    const res = await t.request('GET', '/api/v1/transactions/OP-NOPE', { token: opKey });
    expect(res.status).toBe(404);
    expect(res.body.errors[0].code).toBe('TRANSACTION_NOT_FOUND');
  });
});

describe('POST /api/v1/refunds', () => {
  it.each([
    [{ amount: '10' }, 'trx_id'],
    [{ trx_id: 'X', amount: '1.001' }, 'amount'],
    [{ trx_id: 'X' }, 'amount'],
  ])('refuses %j naming %s', async (body, field) => {
    const res = await t.request('POST', '/api/v1/refunds', { token: opKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors[0].field).toBe(field);
  });

  it('more than is left is the native refusal', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey: nativeKey, gateway: bkash, amount: '100.00' });
    const res = await t.request('POST', '/api/v1/refunds', { token: opKey, body: { trx_id: transaction.trxId, amount: '100.01' } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('REFUND_EXCEEDS_AVAILABLE');
  });
});
