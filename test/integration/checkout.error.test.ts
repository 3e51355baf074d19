import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, type CreatePaymentOptions } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { updateGateway } from '../../server/domain/gateways/service.ts';
import { completeTransaction, getTransactionByTrxId } from '../../server/domain/payments/transactions.ts';

/**
 * Every way paying on the checkout is refused, through HTTP: paying twice (also
 * racing), an expired link, amounts outside a gateway's limits, no exchange
 * rate, unknown and disabled gateways, a gateway trx id the brand already
 * claims, and malformed input. A refusal never creates anything.
 */

let t: TestContext;
let apiKey: string;
let otherKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;
let euro: GatewayView;

const em = () => t.runtime.deps.db;
const api = (id: string) => `/api/checkout/v1/payments/${id}`;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey } = await t.createBrand('Shop A', { mode: 'test' }));
  ({ apiKey: otherKey } = await t.createBrand('Shop B'));
  bkash = await seedGateway(t, 'bkash', { sort_order: 1 });
  sandbox = await seedGateway(t, 'sandbox', { sort_order: 2, currencies: ['BDT'] });
  // Takes EUR only, so EUR intents can be created; no EUR rate exists for the others.
  euro = await seedGateway(t, 'sandbox', { sort_order: 3, currencies: ['EUR'], name: 'Euro card' });
});
afterAll(() => t?.close());

const newPayment = async (key = apiKey, body: CreatePaymentOptions = {}): Promise<string> => (await createPayment(t, key, { reference: null, ...body })).payment_id;

function pay(id: string, body: unknown) {
  return t.request('POST', `${api(id)}/transactions`, { body });
}

function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string, field: string | null = null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ success: false, errors: [{ code, field }] });
  expect(res.body.request_id).toMatch(/^req_/);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
}

async function transactionCount(paymentId: string): Promise<number> {
  const [row] = await t.sql<{ n: string }>(
    'SELECT count(*) AS n FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1',
    [paymentId],
  );
  return Number(row!.n);
}

describe('unknown payments', () => {
  it('an unknown or malformed id is PAYMENT_NOT_FOUND on every route', async () => {
    for (const id of ['6a1f1c52-9d0e-4d43-9b8e-6c1a2f3b4c5d', 'not-a-uuid', "1' OR '1'='1"]) {
      const enc = encodeURIComponent(id);
      expectError(await t.request('GET', api(enc)), 404, 'PAYMENT_NOT_FOUND');
      expectError(await pay(enc, { gateway: bkash.code, gateway_trx_id: 'X1' }), 404, 'PAYMENT_NOT_FOUND');
      expectError(await t.request('POST', `${api(enc)}/cancellations`), 404, 'PAYMENT_NOT_FOUND');
    }
  });
});

describe('paying twice', () => {
  it('while a transaction is open, and after completion, is PAYMENT_ALREADY_STARTED', async () => {
    const id = await newPayment();
    const first = await pay(id, { gateway: bkash.code, gateway_trx_id: 'TWICE00001' });
    expect(first.status).toBe(201);
    expectError(await pay(id, { gateway: bkash.code, gateway_trx_id: 'TWICE00002' }), 409, 'PAYMENT_ALREADY_STARTED');
    expectError(await pay(id, { gateway: sandbox.code }), 409, 'PAYMENT_ALREADY_STARTED');

    await completeTransaction(em(), (await getTransactionByTrxId(em(), first.body.data.trx_id)).id, { source: 'admin' });
    const after = await pay(id, { gateway: sandbox.code });
    expectError(after, 409, 'PAYMENT_ALREADY_STARTED');
    expect(after.body.error).toBe('Payment is already completed');
    expectError(await t.request('POST', `${api(id)}/cancellations`), 409, 'PAYMENT_ALREADY_STARTED');
    expect(await transactionCount(id)).toBe(1);
  });

  it('ten customers tabs paying at the same moment: exactly one transaction', async () => {
    const id = await newPayment();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? pay(id, { gateway: sandbox.code }) : pay(id, { gateway: bkash.code, gateway_trx_id: `RACE0000${i}` }))),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.errors[0].code).toBe('PAYMENT_ALREADY_STARTED');
    expect(await transactionCount(id)).toBe(1);
    // The losing sandbox attempts opened no sandbox session either.
    const [sessions] = await t.sql<{ n: string }>(
      'SELECT count(*) AS n FROM sandbox_sessions s JOIN transactions t ON t.id = s.transaction_id JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1',
      [id],
    );
    const winner = results.find((r) => r.status === 201)!;
    expect(Number(sessions!.n)).toBe(winner.body.data.gateway_type === 'automatic' ? 1 : 0);
  });
});

describe('an expired payment link', () => {
  it('accepts nothing: PAYMENT_EXPIRED with the spec message; the view says expired and offers no gateway', async () => {
    const id = await newPayment();
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [id]);
    const res = await pay(id, { gateway: bkash.code, gateway_trx_id: 'LATE000001' });
    expectError(res, 410, 'PAYMENT_EXPIRED');
    expect(res.body.error).toBe('Payment link has expired');
    expectError(await pay(id, { gateway: sandbox.code }), 410, 'PAYMENT_EXPIRED');
    // Whatever the body: the link's expiry is the answer.
    expectError(await pay(id, { gateway: 'no-such-gateway' }), 410, 'PAYMENT_EXPIRED');
    expect(await transactionCount(id)).toBe(0);

    const view = await t.request('GET', api(id));
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({ status: 'expired', payable: false, gateways: [], transaction: null, redirect_url: null });
  });

  it('an open transaction on it shows expired too, even before the expiry job ran', async () => {
    const id = await newPayment();
    expect((await pay(id, { gateway: bkash.code, gateway_trx_id: 'LATE000002' })).status).toBe(201);
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [id]);
    expect((await t.request('GET', api(id))).body.data).toMatchObject({ status: 'expired', payable: false, gateways: [] });
  });
});

describe("amounts outside a gateway's limits", () => {
  it('below the minimum: the gateway is not offered, and paying on it anyway is AMOUNT_BELOW_MINIMUM', async () => {
    const id = await newPayment(apiKey, { amount: '5.00' });
    const view = (await t.request('GET', api(id))).body.data;
    expect(view.gateways.map((g: any) => g.code)).toEqual([sandbox.code]);
    expectError(await pay(id, { gateway: bkash.code, gateway_trx_id: 'SMALL00001' }), 422, 'AMOUNT_BELOW_MINIMUM', 'amount');
    expect(await transactionCount(id)).toBe(0);
  });

  it('above the maximum: AMOUNT_EXCEEDS_MAXIMUM with the spec message', async () => {
    const id = await newPayment(apiKey, { amount: '25000.01' });
    const view = (await t.request('GET', api(id))).body.data;
    expect(view.gateways.map((g: any) => g.code)).toEqual([sandbox.code]);
    const res = await pay(id, { gateway: bkash.code, gateway_trx_id: 'LARGE00001' });
    expectError(res, 422, 'AMOUNT_EXCEEDS_MAXIMUM', 'amount');
    expect(res.body.error).toBe('Amount exceeds maximum');
    // Exactly at the maximum is fine.
    const edge = await newPayment(apiKey, { amount: '25000.00' });
    expect((await pay(edge, { gateway: bkash.code, gateway_trx_id: 'EDGE000001' })).status).toBe(201);
  });
});

describe('gateways that cannot take the payment', () => {
  it('no exchange rate into the gateway currency: CURRENCY_CONVERSION_FAILED, nothing created', async () => {
    const id = await newPayment(apiKey, { amount: '20.00', currency: 'EUR' });
    const view = (await t.request('GET', api(id))).body.data;
    expect(view.gateways.map((g: any) => g.code)).toEqual([euro.code]);
    expectError(await pay(id, { gateway: bkash.code, gateway_trx_id: 'EURO000001' }), 422, 'CURRENCY_CONVERSION_FAILED');
    expect(await transactionCount(id)).toBe(0);
  });

  it('unknown and disabled gateways are GATEWAY_UNAVAILABLE', async () => {
    const id = await newPayment();
    expectError(await pay(id, { gateway: 'no-such-gateway' }), 422, 'GATEWAY_UNAVAILABLE', 'gateway');
    const off = await seedGateway(t, 'nagad', { enabled: false });
    expectError(await pay(id, { gateway: off.code, gateway_trx_id: 'OFF0000001' }), 422, 'GATEWAY_UNAVAILABLE', 'gateway');
    expect((await t.request('GET', api(id))).body.data.gateways.map((g: any) => g.code)).not.toContain(off.code);
    // Disabled after the page was loaded: refused at payment time too.
    await updateGateway(em(), sandbox.code, { enabled: false });
    try {
      expectError(await pay(id, { gateway: sandbox.code }), 422, 'GATEWAY_UNAVAILABLE', 'gateway');
    } finally {
      await updateGateway(em(), sandbox.code, { enabled: true });
    }
    expect(await transactionCount(id)).toBe(0);
  });
});

describe('a gateway transaction id is used once, across brands', () => {
  it("the brand's own customer submitting an id it already claims (any case) gets GATEWAY_TRX_ID_TAKEN; another brand's claim is not revealed", async () => {
    const a = await newPayment(apiKey);
    const again = await newPayment(apiKey);
    const b = await newPayment(otherKey);
    expect((await pay(a, { gateway: bkash.code, gateway_trx_id: 'SHARED0001' })).status).toBe(201);
    expectError(await pay(again, { gateway: bkash.code, gateway_trx_id: 'shared0001' }), 409, 'GATEWAY_TRX_ID_TAKEN', 'gateway_trx_id');
    expect(await transactionCount(again)).toBe(0);
    // Another brand's checkout neither refuses nor reveals it: the submission waits for its SMS like any other.
    const atB = await pay(b, { gateway: bkash.code, gateway_trx_id: 'shared0001' });
    expect(atB.status).toBe(201);
    expect(atB.body.data.status).toBe('awaiting_verification');
  });
});

describe('malformed input is a 400 naming the field; nothing is created', () => {
  it('rejects each bad body', async () => {
    const id = await newPayment();
    const cases: Array<[unknown, string]> = [
      [{ gateway: bkash.code, gateway_trx_id: 'OK00000001', tip: '5.00' }, 'tip'],
      [{ gateway_trx_id: 'OK00000001' }, 'gateway'],
      [{ gateway: 7 }, 'gateway'],
      [{ gateway: bkash.code }, 'gateway_trx_id'],
      [{ gateway: bkash.code, gateway_trx_id: '   ' }, 'gateway_trx_id'],
      [{ gateway: bkash.code, gateway_trx_id: 'has spaces in it' }, 'gateway_trx_id'],
      [{ gateway: bkash.code, gateway_trx_id: 'OK00000001', sender_number: 'call me' }, 'sender_number'],
      [{ gateway: bkash.code, gateway_trx_id: 'OK00000001', method: 'card' }, 'method'],
      [{ gateway: sandbox.code, gateway_trx_id: 'OK00000001' }, 'gateway_trx_id'],
      [{ gateway: sandbox.code, sender_number: '01712345678' }, 'sender_number'],
    ];
    for (const [body, field] of cases) {
      const res = await pay(id, body);
      expectError(res, 400, 'VALIDATION_ERROR', field);
    }
    expect(await transactionCount(id)).toBe(0);
    const [sessions] = await t.sql<{ n: string }>(
      'SELECT count(*) AS n FROM sandbox_sessions s JOIN transactions t ON t.id = s.transaction_id JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1',
      [id],
    );
    expect(Number(sessions!.n)).toBe(0);

    const form = await t.request('POST', `${api(id)}/transactions`, { rawBody: 'gateway=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectError(form, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await t.request('POST', `${api(id)}/cancellations`, { body: { reason: 'x' } }), 400, 'VALIDATION_ERROR', 'reason');
  });
});
