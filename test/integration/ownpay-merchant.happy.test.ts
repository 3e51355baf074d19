import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedCompletedTransaction, seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import { cancelPayment } from '../../server/domain/payments/cancel.ts';
import { completeTransaction, startTransaction } from '../../server/domain/payments/transactions.ts';
import { expectOwnpayShape, ownpayShapes } from '../support/ownpay-shapes.ts';

/**
 * The OwnPay dialect through HTTP, each answer checked against the shape
 * OwnPay publishes for it (test/support/ownpay-shapes.ts names the file each
 * shape comes from), and the native shapes unchanged for native keys.
 */

let t: TestContext;
let brandId: number;
let nativeKey: string;
let opKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  t = await startTestServer();
  ({ brandId, apiKey: nativeKey } = await t.createBrand('OwnPay Shop'));
  opKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'woocommerce', mode: 'live', dialect: 'ownpay' })).key;
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

/** The body the WooCommerce plugin sends (own-pay/OwnPay-WordPress includes/class-opwc-payment.php, process_payment). */
const wooBody = (over: Record<string, unknown> = {}) => ({
  amount: '500',
  currency: 'bdt',
  callback_url: 'https://shop.example/?wc-api=ownpay',
  redirect_url: 'https://shop.example/checkout/order-received/42/?key=wc_order_abc',
  cancel_url: 'https://shop.example/cart/?cancel_order=true',
  customer_mail: 'Buyer@Example.com',
  customer_name: 'Rahim Uddin',
  customer_phone: '01712345678',
  reference: '42',
  metadata: { plugin_version: '1.2.0', woocommerce_version: '9.0', tags: ['a', 'b'] },
  logo_url: 'https://shop.example/logo.png',
  ...over,
});

describe('keys', () => {
  it('an OwnPay-dialect key is spelled op_live_ and is listed with its dialect', async () => {
    expect(opKey).toMatch(/^op_live_[0-9A-Za-z]{40}$/);
    const rows = await t.sql<{ dialect: string; prefix: string }>('SELECT dialect, prefix FROM api_keys WHERE brand_id = $1 ORDER BY id', [brandId]);
    expect(rows.map((r) => r.dialect)).toEqual(['native', 'ownpay']);
    const test = await createApiKey(t.runtime.deps.db, brandId, { name: 'whmcs test', mode: 'test', dialect: 'ownpay' });
    expect(test.key).toMatch(/^op_test_/);
  });

  it('the admin API creates one with dialect ownpay', async () => {
    const res = await t.request('POST', `/api/admin/v1/brands/${brandId}/api-keys`, { token: t.runtime.deps.secrets.adminToken, body: { name: 'laravel', dialect: 'ownpay' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.key).toMatch(/^op_live_/);
    expect(res.body.data.dialect).toBe('ownpay');
  });
});

describe('POST /api/v1/payments', () => {
  it('takes the plugins\' flat body, ignores fields it does not know, and answers 201 with payment_id and checkout_url', async () => {
    const res = await t.request('POST', '/api/v1/payments', { token: opKey, body: wooBody({ something_new: { x: 1 } }) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.success).toBe(true);
    expectOwnpayShape(res.body.data, ownpayShapes.InitiatePaymentResponse);
    expect(res.body.data).toMatchObject({ status: 'pending', amount: '500.00', currency: 'BDT', reference: '42' });
    expect(res.body.data.checkout_url).toBe(`${t.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/checkout/${res.body.data.payment_id}`);
    const [row] = await t.sql<{ success_url: string; cancel_url: string; callback_url: string; metadata: unknown }>(
      'SELECT success_url, cancel_url, callback_url, metadata FROM payment_intents WHERE uuid = $1',
      [res.body.data.payment_id],
    );
    // The redirect back carries `status` (and the checkout adds `payment_id`).
    expect(row!.success_url).toBe('https://shop.example/checkout/order-received/42/?key=wc_order_abc&status=completed');
    expect(row!.cancel_url).toBe('https://shop.example/cart/?cancel_order=true&status=cancelled');
    expect(row!.callback_url).toBe('https://shop.example/?wc-api=ownpay');
    expect(row!.metadata).toEqual({ plugin_version: '1.2.0', woocommerce_version: '9.0', tags: ['a', 'b'] });
  });

  it.each([
    ['500', '500.00'],
    ['500.5', '500.50'],
    ['0500.25', '500.25'],
    [750, '750.00'],
    [12.5, '12.50'],
  ])('amount %j is stored as %s', async (amount, stored) => {
    const res = await t.request('POST', '/api/v1/payments', { token: opKey, body: { amount, currency: 'BDT' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.amount).toBe(stored);
  });

  it('honours Idempotency-Key like the native route', async () => {
    const headers = { 'Idempotency-Key': 'op-idem-1' };
    const a = await t.request('POST', '/api/v1/payments', { token: opKey, body: wooBody(), headers });
    const b = await t.request('POST', '/api/v1/payments', { token: opKey, body: wooBody(), headers });
    expect(a.status).toBe(201);
    expect(b.body.data.payment_id).toBe(a.body.data.payment_id);
    const c = await t.request('POST', '/api/v1/payments', { token: opKey, body: wooBody({ amount: '501' }), headers });
    expect(c.status).toBe(409);
    expect(c.body.errors[0].code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('a native key keeps the native strict body and answer', async () => {
    const flat = await t.request('POST', '/api/v1/payments', { token: nativeKey, body: { amount: '500.00', currency: 'BDT', redirect_url: 'https://shop.example/ok' } });
    expect(flat.status).toBe(400);
    expect(flat.body.errors[0].code).toBe('VALIDATION_ERROR');
    const short = await t.request('POST', '/api/v1/payments', { token: nativeKey, body: { amount: '500', currency: 'BDT' } });
    expect(short.status).toBe(400);
    const ok = await t.request('POST', '/api/v1/payments', { token: nativeKey, body: { amount: '500.00', currency: 'BDT' } });
    expect(ok.status).toBe(201);
    expect(ok.body.data).toHaveProperty('success_url', null);
    expect(ok.body.data).not.toHaveProperty('token');
  });
});

describe('bodies exactly as the plugins and SDKs send them', () => {
  it('the WHMCS module (own-pay/OwnPay-WHMCS modules/gateways/ownpay.php, ownpay_link): 201, and the paid redirect carries payment_id and status', async () => {
    const callback = 'https://billing.example/modules/gateways/callback/ownpay.php';
    const body = {
      amount: '120.00',
      currency: 'BDT',
      redirect_url: `${callback}?action=return&invoice_id=77&return_url=${encodeURIComponent('https://billing.example/viewinvoice.php?id=77')}`,
      cancel_url: 'https://billing.example/viewinvoice.php?id=77',
      callback_url: callback,
      reference: '77',
      metadata: { whmcs_invoice_id: '77', whmcs_client_id: '5', module_version: '1.0.0', whmcs_version: '8.10' },
      logo_url: 'https://billing.example/logo.png',
      customer_name: 'Karim',
      customer_email: 'karim@example.com',
      customer_phone: '+8801711111111',
    };
    const res = await t.request('POST', '/api/v1/payments', { token: opKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const paymentId = res.body.data.payment_id as string;
    const started = await startTransaction(t.runtime.deps.db, t.runtime.deps.crypto, { paymentId, gatewayCode: bkash.code, gatewayTrxId: 'WHMCS00077' });
    await completeTransaction(t.runtime.deps.db, started.id, { source: 'admin' });
    const checkout = await t.request('GET', `/api/checkout/v1/payments/${paymentId}`);
    const back = new URL(checkout.body.data.redirect_url);
    expect(back.searchParams.get('payment_id')).toBe(paymentId);
    expect(back.searchParams.get('status')).toBe('completed');
    expect(back.searchParams.get('invoice_id')).toBe('77');
    expect(back.searchParams.get('return_url')).toBe('https://billing.example/viewinvoice.php?id=77');
    // What the module then reads from GET /api/v1/payments/{id}: status, trx_id, amount, fee.
    const looked = await t.request('GET', `/api/v1/payments/${paymentId}`, { token: opKey });
    expect(looked.body.data).toMatchObject({ status: 'completed', trx_id: started.trxId, amount: '120.00', fee: expect.stringMatching(/^\d+\.\d{2}$/) });
  });

  it('the Laravel SDK (own-pay/ownpay-laravel README.md, "Creating payments": customer_mail) and the Node SDK (own-pay/ownpay-nodejs src/resources/payments.ts: String(amount))', async () => {
    const laravel = await t.request('POST', '/api/v1/payments', {
      token: opKey,
      body: { amount: 1000, currency: 'BDT', redirect_url: 'https://example.com/success', cancel_url: 'https://example.com/cancel', callback_url: 'https://example.com/webhook', customer_name: 'John Doe', customer_mail: 'john@example.com' },
    });
    expect(laravel.status, JSON.stringify(laravel.body)).toBe(201);
    const node = await t.request('POST', '/api/v1/payments', {
      token: opKey,
      body: { amount: '99.99', currency: 'BDT', customer_email: 'customer@example.com', customer_name: 'John Doe', reference: 'ORDER-12345', metadata: { order_id: '12345', product: 'Widget' } },
    });
    expect(node.status, JSON.stringify(node.body)).toBe(201);
    expectOwnpayShape(node.body.data, ownpayShapes.InitiatePaymentResponse);
  });
});

describe('GET /api/v1/payments/{payment_id}', () => {
  it('reports the intent\'s amount and currency and OwnPay\'s field names', async () => {
    const created = (await t.request('POST', '/api/v1/payments', { token: opKey, body: wooBody({ amount: '1200.5' }) })).body.data;
    const res = await t.request('GET', `/api/v1/payments/${created.payment_id}`, { token: opKey });
    expect(res.status).toBe(200);
    expectOwnpayShape(res.body.data, ownpayShapes.PaymentDetailsResponse);
    expect(res.body.data).toMatchObject({ id: null, trx_id: null, amount: '1200.50', currency: 'BDT', fee: '0.00', status: 'pending', reference: '42' });
    expect(res.body.data.customer).toEqual({ name: 'Rahim Uddin', email: 'buyer@example.com' });
  });

  it('spells a canceled payment cancelled; a native key still reads canceled', async () => {
    const created = (await t.request('POST', '/api/v1/payments', { token: opKey, body: wooBody() })).body.data;
    await cancelPayment(t.runtime.deps.db, t.runtime.deps.crypto, brandId, 'live', created.payment_id);
    expect((await t.request('GET', `/api/v1/payments/${created.payment_id}`, { token: opKey })).body.data.status).toBe('cancelled');
    const native = await t.request('GET', `/api/v1/payments/${created.payment_id}`, { token: nativeKey });
    expect(native.body.data.status).toBe('canceled');
    expect(native.body.data.object).toBe('payment_intent');
  });

  it('a completed payment shows its transaction', async () => {
    const { paymentId, transaction } = await seedCompletedTransaction(t, { apiKey: nativeKey, gateway: bkash, amount: '800.00', gatewayTrxId: 'OPGW000001' });
    const res = await t.request('GET', `/api/v1/payments/${paymentId}`, { token: opKey });
    expect(res.body.data).toMatchObject({ id: transaction.id, trx_id: transaction.trxId, gateway_trx_id: 'OPGW000001', status: 'completed', amount: '800.00', currency: 'BDT' });
  });
});

describe('transactions', () => {
  it('GET /api/v1/transactions lists with meta paging; GET /api/v1/transactions/{trx_id} finds one by either reference', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey: nativeKey, gateway: bkash, amount: '300.00', gatewayTrxId: 'OPGW000002' });
    const list = await t.request('GET', '/api/v1/transactions?per_page=2&status=completed', { token: opKey });
    expect(list.status).toBe(200);
    expectOwnpayShape(list.body, ownpayShapes.PaginatedTransactionsResponse);
    expect(list.body.meta).toMatchObject({ page: 1, per_page: 2 });
    expect(list.body.meta.total).toBeGreaterThanOrEqual(2);
    for (const item of list.body.data) expectOwnpayShape(item, ownpayShapes.Transaction);

    const one = await t.request('GET', `/api/v1/transactions/${transaction.trxId}`, { token: opKey });
    expect(one.status).toBe(200);
    expectOwnpayShape(one.body.data, ownpayShapes.Transaction);
    expect(one.body.data).toMatchObject({ id: transaction.id, amount: '300.00', status: 'completed', net_amount: expect.stringMatching(/^\d+\.\d{2}$/) });
    const byGateway = await t.request('GET', '/api/v1/transactions/opgw000002', { token: opKey });
    expect(byGateway.body.data.trx_id).toBe(transaction.trxId);
  });
});

describe('POST /api/v1/customers', () => {
  it('creates a customer and answers its id and uuid', async () => {
    const res = await t.request('POST', '/api/v1/customers', { token: opKey, body: { name: 'Alice Smith', email: 'alice@example.com', phone: '+8801800000000', source: 'laravel' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expectOwnpayShape(res.body.data, ownpayShapes.CreateCustomerResponse);
  });
});

describe('GET /api/v1/health', () => {
  it('answers OwnPay\'s health shape', async () => {
    const res = await t.request('GET', '/api/v1/health', { token: opKey });
    expect(res.status).toBe(200);
    expectOwnpayShape(res.body.data, ownpayShapes.HealthCheck);
    expect(res.body.data).toMatchObject({ status: 'healthy', db: 'connected', gateways: expect.any(Number) });
  });
});

describe('POST /api/v1/refunds', () => {
  it('takes transaction_id as an alias of trx_id (a reference or the numeric id) and OwnPay amounts', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey: nativeKey, gateway: bkash, amount: '900.00', gatewayTrxId: 'OPGW000003' });
    const byRef = await t.request('POST', '/api/v1/refunds', { token: opKey, body: { transaction_id: transaction.trxId, amount: '100', reason: 'return' } });
    expect(byRef.status, JSON.stringify(byRef.body)).toBe(201);
    expectOwnpayShape(byRef.body.data, ownpayShapes.Refund);
    expect(byRef.body.data).toMatchObject({ trx_id: transaction.trxId, amount: '100.00', status: 'pending' });
    const byId = await t.request('POST', '/api/v1/refunds', { token: opKey, body: { transaction_id: transaction.id, amount: 50.5 } });
    expect(byId.status, JSON.stringify(byId.body)).toBe(201);
    expect(byId.body.data.amount).toBe('50.50');
    const byTrx = await t.request('POST', '/api/v1/refunds', { token: opKey, body: { trx_id: transaction.trxId, amount: '1' } });
    expect(byTrx.status).toBe(201);
  });

  it('native refunds still refuse transaction_id and short amounts', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey: nativeKey, gateway: bkash, amount: '900.00' });
    const res = await t.request('POST', '/api/v1/refunds', { token: nativeKey, body: { transaction_id: transaction.trxId, amount: '100.00' } });
    expect(res.status).toBe(400);
  });
});

describe('routes the dialect does not reshape', () => {
  it('an op_ key reaches the native routes (same auth, scope and mode)', async () => {
    const res = await t.request('GET', '/api/v1/refunds', { token: opKey });
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ page: 1 });
  });
});
