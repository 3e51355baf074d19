import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedRate, type CreatePaymentOptions } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { completeTransaction, failTransaction, getTransactionByTrxId } from '../../server/domain/payments/transactions.ts';
import { startCheckoutTransaction } from '../../server/domain/checkout/pay.ts';

/**
 * The checkout's JSON calls and page, through HTTP: what the page shows per
 * state, conversion shown and then charged, manual submission, the sandbox
 * redirect, cancellation, and the SMS-matching seam.
 */

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;

const em = () => t.runtime.deps.db;
const api = (id: string) => `/api/checkout/v1/payments/${id}`;

beforeAll(async () => {
  // No workers: nothing in the background may move the payments under test.
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey } = await t.createBrand('Corner Shop', { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash', { sort_order: 1 });
  // The customer pays the sandbox's fee, the merchant bKash's: both ways show one number to send.
  sandbox = await seedGateway(t, 'sandbox', { sort_order: 2, fee_payer: 'customer' });
  await seedRate(t, 'USD', 'BDT', '110.5');
});
afterAll(() => t?.close());

const newPayment = async (body: CreatePaymentOptions = {}): Promise<string> =>
  (await createPayment(t, apiKey, { reference: 'order-1001', success_url: 'https://shop.example/thanks?order=1001', cancel_url: 'https://shop.example/cart', ...body })).payment_id;

describe('GET /api/checkout/v1/payments/{id}', () => {
  it('shows the merchant, the amount and every gateway that can take it, with its amount and fee', async () => {
    const id = await newPayment({ customer: { name: 'Rahim Uddin', email: 'rahim@example.com', phone: '01712345678' } });
    const res = await t.request('GET', api(id));
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({
      payment_id: id,
      brand: { name: 'Corner Shop' },
      amount: '500.00',
      currency: 'BDT',
      reference: 'order-1001',
      status: 'pending',
      payable: true,
      transaction: null,
      redirect_url: null,
    });
    expect(data.expires_at).toMatch(/Z$/);
    expect(data.gateways).toEqual([
      {
        code: bkash.code,
        name: 'bKash',
        type: 'manual',
        methods: ['send_money'],
        amount: '500.00',
        currency: 'BDT',
        fee: '0.00',
        amount_to_send: '500.00',
        converted: false,
        exchange_rate: null,
        min_amount: '10.00',
        max_amount: '25000.00',
        receiving_account: '01700000000',
        receiving_account_type: null,
        instructions: 'Send Money to the number above, then enter the TrxID.',
      },
      {
        code: sandbox.code,
        name: 'Sandbox',
        type: 'automatic',
        methods: ['card'],
        amount: '500.00',
        currency: 'BDT',
        fee: '12.80',
        amount_to_send: '512.80',
        converted: false,
        exchange_rate: null,
        min_amount: '1.00',
        max_amount: null,
        receiving_account: null,
        receiving_account_type: null,
        instructions: null,
      },
    ]);
    // The payment id is the only credential: no personal data of the customer is shown.
    expect(JSON.stringify(res.body)).not.toMatch(/rahim|Rahim|1712345678|customer/);
  });

  it('converts into a gateway currency with the configured rate, shows it, and charges exactly that', async () => {
    const id = await newPayment({ amount: '5.00', currency: 'USD' });
    const view = (await t.request('GET', api(id))).body.data;
    const quote = view.gateways.find((g: any) => g.code === bkash.code);
    // 5.00 USD x 110.5 = 552.50 BDT; the merchant pays bKash's fee, so the customer sees none.
    expect(quote).toMatchObject({ amount: '552.50', currency: 'BDT', fee: '0.00', amount_to_send: '552.50', converted: true, exchange_rate: '110.5' });
    // The sandbox takes USD itself: no conversion; 2.5 % + 0.30 of 5.00 = 0.425 -> 0.43.
    expect(view.gateways.find((g: any) => g.code === sandbox.code)).toMatchObject({ amount: '5.00', currency: 'USD', fee: '0.43', amount_to_send: '5.43', converted: false });

    const res = await t.request('POST', `${api(id)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'CNV552USD1' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ amount: '552.50', currency: 'BDT', fee: '0.00', amount_to_send: '552.50', status: 'awaiting_verification' });
    const [row] = await t.sql<{ amount: string; currency: string; fee: string; exchange_rate: string }>(
      'SELECT amount::text, currency, fee::text, exchange_rate::text FROM transactions WHERE trx_id = $1',
      [res.body.data.trx_id],
    );
    expect(row).toEqual({ amount: '552.50', currency: 'BDT', fee: '10.22', exchange_rate: '110.5000000000' });
  });
});

describe('paying with a manual gateway', () => {
  it('takes the gateway transaction id and waits for verification', async () => {
    const id = await newPayment();
    const res = await t.request('POST', `${api(id)}/transactions`, {
      body: { gateway: bkash.code, gateway_trx_id: ' 8N7A6D5C4B ', sender_number: '01712345678' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({
      gateway: bkash.code,
      gateway_name: 'bKash',
      gateway_type: 'manual',
      method: 'send_money',
      status: 'awaiting_verification',
      amount: '500.00',
      currency: 'BDT',
      fee: '0.00',
      amount_to_send: '500.00',
      gateway_trx_id: '8N7A6D5C4B',
      failure_reason: null,
      completed_at: null,
      redirect_url: null,
    });
    expect(res.body.data.trx_id).toMatch(/^TRX[0-9A-F]{16}$/);

    const view = (await t.request('GET', api(id))).body.data;
    expect(view).toMatchObject({ status: 'awaiting_verification', payable: false, gateways: [], redirect_url: null });
    expect(view.transaction.trx_id).toBe(res.body.data.trx_id);

    // The sender number is stored encrypted, never in clear.
    const [row] = await t.sql<{ sender_number_encrypted: string }>('SELECT sender_number_encrypted FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]);
    expect(row!.sender_number_encrypted).not.toContain('1712345678');
    expect(row!.sender_number_encrypted.length).toBeGreaterThan(20);

    const page = await fetch(`${t.baseUrl}/checkout/${id}`).then((r) => r.text());
    expect(page).toContain('Waiting for verification');
    expect(page).toContain('8N7A6D5C4B');
    expect(page).toContain('data-status="awaiting_verification"');
  });

  it('once the transaction completes, the checkout points at the success URL', async () => {
    const id = await newPayment();
    const started = await t.request('POST', `${api(id)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'DONE000001' } });
    const trx = await getTransactionByTrxId(em(), started.body.data.trx_id);
    await completeTransaction(em(), trx.id, { source: 'admin' });

    const view = (await t.request('GET', api(id))).body.data;
    // The payment id rides along so the merchant's page can look the payment up.
    expect(view).toMatchObject({ status: 'completed', payable: false, redirect_url: `https://shop.example/thanks?order=1001&payment_id=${id}` });
    expect(view.transaction).toMatchObject({ status: 'completed', gateway_trx_id: 'DONE000001' });
    expect(view.transaction.completed_at).toMatch(/Z$/);

    const page = await fetch(`${t.baseUrl}/checkout/${id}`).then((r) => r.text());
    expect(page).toContain('Payment received');
    expect(page).toContain(`data-redirect-url="https://shop.example/thanks?order=1001&amp;payment_id=${id}"`);
    expect(page).not.toContain('id="cancel"');
  });

  it('after a failed attempt the payment can be paid again, and the page says why it failed', async () => {
    const id = await newPayment();
    const first = await t.request('POST', `${api(id)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'WRONG00001' } });
    await failTransaction(em(), (await getTransactionByTrxId(em(), first.body.data.trx_id)).id, { reason: 'No such payment arrived' });

    const view = (await t.request('GET', api(id))).body.data;
    expect(view).toMatchObject({ status: 'failed', payable: true, transaction: { status: 'failed', failure_reason: 'No such payment arrived' } });
    expect(view.gateways.map((g: any) => g.code)).toEqual([bkash.code, sandbox.code]);
    const page = await fetch(`${t.baseUrl}/checkout/${id}`).then((r) => r.text());
    expect(page).toContain('did not go through: No such payment arrived');

    const second = await t.request('POST', `${api(id)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'RIGHT00001' } });
    expect(second.status).toBe(201);
    expect(second.body.data.trx_id).not.toBe(first.body.data.trx_id);
  });
});

describe('paying with the sandbox (automatic) gateway', () => {
  it('goes to processing and hands out the sandbox page, whose token is stored only as a hash', async () => {
    const id = await newPayment();
    const res = await t.request('POST', `${api(id)}/transactions`, { body: { gateway: sandbox.code } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ gateway_type: 'automatic', status: 'processing', amount: '500.00', fee: '12.80', amount_to_send: '512.80', gateway_trx_id: null });
    const redirect: string = res.body.data.redirect_url;
    const base = t.config.PUBLIC_BASE_URL;
    expect(redirect.startsWith(`${base}/sandbox/pay/`)).toBe(true);
    const token = redirect.slice(`${base}/sandbox/pay/`.length);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const sessions = await t.sql<{ token_hash: string; status: string; amount: string; currency: string }>(
      `SELECT s.token_hash, s.status, s.amount::text, s.currency FROM sandbox_sessions s JOIN transactions t ON t.id = s.transaction_id WHERE t.trx_id = $1`,
      [res.body.data.trx_id],
    );
    expect(sessions).toEqual([{ token_hash: createHash('sha256').update(token).digest('hex'), status: 'open', amount: '500.00', currency: 'BDT' }]);

    // The same link is handed out again while the transaction is processing (the customer came back).
    const view = (await t.request('GET', api(id))).body.data;
    expect(view).toMatchObject({ status: 'processing', payable: false, transaction: { redirect_url: redirect } });

    const sandboxPage = await fetch(`${t.baseUrl}/sandbox/pay/${token}`);
    expect(sandboxPage.status).toBe(200);
    const text = await sandboxPage.text();
    expect(text).toContain('Corner Shop');
    expect(text).toContain('500.00');
    expect(text).toContain(`action="/sandbox/pay/${token}/approve"`);
    expect(text).toContain(`action="/sandbox/pay/${token}/decline"`);
  });
});

describe('cancelling', () => {
  it("returns the merchant's cancel URL and changes nothing", async () => {
    const id = await newPayment();
    const res = await t.request('POST', `${api(id)}/cancellations`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ cancel_url: 'https://shop.example/cart' });
    expect((await t.request('GET', api(id))).body.data).toMatchObject({ status: 'pending', payable: true });

    const bare = await newPayment({ cancel_url: undefined, success_url: undefined });
    const none = await t.request('POST', `${api(bare)}/cancellations`, { body: {} });
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual({ cancel_url: null });
  });
});

describe('the SMS-matching seam of a manual submission', () => {
  const deps = () => ({
    keys: t.runtime.deps.crypto,
    links: { publicBaseUrl: t.config.PUBLIC_BASE_URL, sandboxSecret: t.runtime.deps.secrets.sandboxCallbackSecret },
    logger: t.runtime.deps.logger,
  });

  it('is called after the submission commits, and a match it makes shows at once', async () => {
    const id = await newPayment();
    const calls: number[] = [];
    const result = await startCheckoutTransaction(
      em(),
      {
        ...deps(),
        matchSubmittedTransaction: async (e, transactionId) => {
          calls.push(transactionId);
          // Committed already: the seam sees the submitted transaction from its own connection.
          const [row] = await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [transactionId]);
          expect(row!.status).toBe('awaiting_verification');
          await completeTransaction(e, transactionId, { source: 'sms' });
        },
      },
      id,
      { gateway: bkash.code, gatewayTrxId: 'SEAM000001' },
    );
    expect(calls).toHaveLength(1);
    expect(result.status).toBe('completed');
  });

  it('a failing matcher leaves the transaction waiting and the submission succeeds', async () => {
    const id = await newPayment();
    const result = await startCheckoutTransaction(
      em(),
      { ...deps(), matchSubmittedTransaction: async () => Promise.reject(new Error('matcher down')) },
      id,
      { gateway: bkash.code, gatewayTrxId: 'SEAM000002' },
    );
    expect(result.status).toBe('awaiting_verification');
    expect(t.logs.some((l) => l.includes('matching a checkout submission failed'))).toBe(true);
  });

  it('is not called for automatic gateways', async () => {
    const id = await newPayment();
    let called = false;
    const result = await startCheckoutTransaction(em(), { ...deps(), matchSubmittedTransaction: async () => void (called = true) }, id, { gateway: sandbox.code });
    expect(result.status).toBe('processing');
    expect(called).toBe(false);
  });
});
