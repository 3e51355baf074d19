import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedRate, seedSetting, seedTransaction } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('Happy Shop'));
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /api/v1/payments', () => {
  it('creates an intent with every field and returns its checkout URL', async () => {
    const before = Date.now();
    const res = await t.request('POST', '/api/v1/payments', {
      token: apiKey,
      body: {
        amount: '1250.00',
        currency: 'BDT',
        reference: 'order-1001',
        customer: { name: 'Rahim Uddin', email: ' Rahim@Example.com ', phone: '01712-345678' },
        metadata: { cart: 'c-77', items: 3, gift: false, note: null },
        expires_in: 900,
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/cart',
      },
    });
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(d).toEqual({
      payment_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      checkout_url: `${t.config.PUBLIC_BASE_URL}/checkout/${d.payment_id}`,
      status: 'pending',
      amount: '1250.00',
      currency: 'BDT',
      reference: 'order-1001',
      customer_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      metadata: { cart: 'c-77', items: 3, gift: false, note: null },
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cart',
      expires_at: expect.stringMatching(ISO_Z),
      created_at: expect.stringMatching(ISO_Z),
      livemode: true,
    });
    const ttl = Date.parse(d.expires_at) - Date.parse(d.created_at);
    expect(ttl).toBe(900_000);
    expect(Date.parse(d.created_at)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('defaults the expiry to the intent_expiry_minutes setting (60, then as configured)', async () => {
    const a = await createPayment(t, apiKey);
    const rowA = await t.sql<{ ttl: number }>(
      `SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM payment_intents WHERE uuid = $1`,
      [a.payment_id],
    );
    expect(rowA[0]!.ttl).toBe(3600);
    await seedSetting(t, 'intent_expiry_minutes', 15);
    try {
      const b = await createPayment(t, apiKey);
      const rowB = await t.sql<{ ttl: number }>(
        `SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM payment_intents WHERE uuid = $1`,
        [b.payment_id],
      );
      expect(rowB[0]!.ttl).toBe(900);
    } finally {
      await seedSetting(t, 'intent_expiry_minutes', 60);
    }
  });

  it('concurrent creates (keyed and not) share their configuration reads; a change before a request is seen by it', async () => {
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.request('POST', '/api/v1/payments', {
          token: apiKey,
          body: { amount: `${100 + i}.00`, currency: 'BDT' },
          headers: i % 2 ? { 'idempotency-key': `burst-${i}-${Date.now()}` } : {},
        }),
      ),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(30).fill(201));
    const ttls = await t.sql<{ ttl: number }>(
      'SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM payment_intents WHERE uuid = ANY($1::uuid[])',
      [burst.map((r) => r.body.data.payment_id)],
    );
    expect(ttls.map((r) => r.ttl)).toEqual(Array(30).fill(3600));
    // No cache: lowered right before the next request, the maximum applies to it.
    await t.sql('UPDATE gateways SET max_amount = 50 WHERE id = $1', [bkash.id]);
    try {
      const refused = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '100.00', currency: 'BDT' }, headers: { 'idempotency-key': `after-${Date.now()}` } });
      expect(refused.status).toBe(422);
      expect(refused.body.errors[0]).toMatchObject({ code: 'AMOUNT_EXCEEDS_MAXIMUM', field: 'amount' });
    } finally {
      await t.sql('UPDATE gateways SET max_amount = $2 WHERE id = $1', [bkash.id, bkash.maxAmount]);
    }
  });

  it('takes an absolute expires_at', async () => {
    const at = new Date(Date.now() + 2 * 3600_000);
    at.setMilliseconds(0);
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '20.00', currency: 'BDT', expires_at: at.toISOString() } });
    expect(res.status).toBe(201);
    expect(res.body.data.expires_at).toBe(at.toISOString());
  });

  it('finds the existing customer by email or phone instead of creating another', async () => {
    const first = await createPayment(t, apiKey, { customer: { name: 'Karim', email: 'karim@example.com' } });
    const sameEmail = await createPayment(t, apiKey, { customer: { email: 'KARIM@example.com ', phone: '+8801812345678' } });
    const samePhone = await createPayment(t, apiKey, { customer: { phone: '01812345678' } });
    const ids = await t.sql<{ customer_id: string }>(
      'SELECT customer_id::text FROM payment_intents WHERE uuid = ANY($1::uuid[]) ORDER BY id',
      [[first.payment_id, sameEmail.payment_id, samePhone.payment_id]],
    );
    expect(new Set(ids.map((r) => r.customer_id)).size).toBe(1);
    // The phone given with the second intent was added to the existing record.
    const lookup = await t.request('GET', `/api/v1/customers/${encodeURIComponent('+8801812345678')}`, { token: apiKey });
    expect(lookup.body.data).toMatchObject({ name: 'Karim', email: 'karim@example.com', phone: '+8801812345678' });
  });

  it('an intent without a customer has customer_id null', async () => {
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '10.00', currency: 'BDT' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ customer_id: null, reference: null, metadata: {}, success_url: null, cancel_url: null });
  });

  it('accepts the largest amount a gateway without maximum takes', async () => {
    await seedGateway(t, 'bkash', { code: 'unlimited', currencies: ['EUR'], max_amount: null });
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '999999999999.99', currency: 'EUR' } });
    expect(res.status).toBe(201);
    expect(res.body.data.amount).toBe('999999999999.99');
  });
});

describe('GET /api/v1/payments/{payment_id}', () => {
  it('returns the intent form while no transaction exists', async () => {
    const p = await createPayment(t, apiKey, { amount: '75.50', reference: 'ref-intent', customer: { name: 'Mina', email: 'mina@example.com' }, metadata: { k: 'v' } });
    const res = await t.request('GET', `/api/v1/payments/${p.payment_id}`, { token: apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      object: 'payment_intent',
      id: expect.any(Number),
      payment_id: p.payment_id,
      transaction_id: null,
      trx_id: null,
      gateway_trx_id: null,
      amount: '75.50',
      currency: 'BDT',
      fee: null,
      status: 'pending',
      gateway: null,
      method: null,
      reference: 'ref-intent',
      requested_amount: '75.50',
      requested_currency: 'BDT',
      exchange_rate: null,
      failure_reason: null,
      created_at: expect.stringMatching(ISO_Z),
      completed_at: null,
      expires_at: p.expires_at,
      customer: { name: 'Mina', email: 'mina@example.com' },
      metadata: { k: 'v' },
      livemode: true,
    });
  });

  it('accepts the payment id in upper case', async () => {
    const p = await createPayment(t, apiKey);
    const res = await t.request('GET', `/api/v1/payments/${p.payment_id.toUpperCase()}`, { token: apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.payment_id).toBe(p.payment_id);
  });

  it('shows an intent past its expiry as expired even before the expiry job runs', async () => {
    const p = await createPayment(t, apiKey);
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [p.payment_id]);
    const res = await t.request('GET', `/api/v1/payments/${p.payment_id}`, { token: apiKey });
    expect(res.body.data.status).toBe('expired');
  });

  it('returns the transaction once one exists, with gateway, fee and completion time', async () => {
    const { paymentId, transaction } = await seedTransaction(t, { apiKey, gateway: bkash, amount: '1000.00', gatewayTrxId: 'BFC2XYZ789' });
    const res = await t.request('GET', `/api/v1/payments/${paymentId}`, { token: apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      object: 'transaction',
      id: transaction.id,
      transaction_id: transaction.id,
      trx_id: transaction.trxId,
      gateway_trx_id: 'BFC2XYZ789',
      amount: '1000.00',
      currency: 'BDT',
      fee: '18.50',
      status: 'completed',
      gateway: bkash.code,
      method: 'send_money',
      requested_amount: '1000.00',
      requested_currency: 'BDT',
      exchange_rate: null,
    });
    expect(transaction.trxId).toMatch(/^TRX[0-9A-F]{16}$/);
    expect(res.body.data.completed_at).toMatch(ISO_Z);
  });

  it('shows each status of the state machine', async () => {
    for (const status of ['pending', 'awaiting_verification', 'failed', 'completed'] as const) {
      const { paymentId } = await seedTransaction(t, { apiKey, gateway: bkash, status });
      const res = await t.request('GET', `/api/v1/payments/${paymentId}`, { token: apiKey });
      expect(res.body.data.status).toBe(status);
      expect(res.body.data.completed_at === null).toBe(status !== 'completed');
    }
    // Automatic gateways are the sandbox: test mode only.
    const sandbox = await seedGateway(t, 'sandbox');
    const testShop = await t.createBrand('Test-mode shop', { mode: 'test' });
    const { paymentId } = await seedTransaction(t, { apiKey: testShop.apiKey, gateway: sandbox, status: 'processing' });
    expect((await t.request('GET', `/api/v1/payments/${paymentId}`, { token: testShop.apiKey })).body.data.status).toBe('processing');
  });

  it('shows the converted amount with the intent amount and rate when the gateway charges another currency', async () => {
    await seedRate(t, 'USD', 'BDT', '117.25');
    const { paymentId } = await seedTransaction(t, { apiKey, gateway: bkash, amount: '10.01', currency: 'USD' });
    const res = await t.request('GET', `/api/v1/payments/${paymentId}`, { token: apiKey });
    // 10.01 * 117.25 = 1173.6725 -> 1173.67; fee 1.85 % = 21.712895 -> 21.71
    expect(res.body.data).toMatchObject({
      amount: '1173.67',
      currency: 'BDT',
      fee: '21.71',
      requested_amount: '10.01',
      requested_currency: 'USD',
      exchange_rate: '117.25',
    });
  });
});
