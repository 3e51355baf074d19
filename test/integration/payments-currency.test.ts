import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteExchangeRate } from '../../server/domain/fx/service.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { completeTransaction, getTransactionByTrxId } from '../../server/domain/payments/transactions.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedRate } from '../support/seed.ts';

/**
 * Currency conversion over every currency a gateway takes, the checkout's
 * not-payable state, and success redirects carrying the payment id.
 */

let t: TestContext;
let apiKey: string;
let dual: GatewayView;

const em = () => t.runtime.deps.db;
const checkout = (id: string) => t.request('GET', `/api/checkout/v1/payments/${id}`);

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('Currency Shop'));
  // Takes BDT first and USD second; only a EUR->USD rate exists, so EUR must reach it through USD.
  dual = await seedGateway(t, 'bkash', { currencies: ['BDT', 'USD'], min_amount: '1.00', max_amount: '25000.00' });
  await seedRate(t, 'EUR', 'USD', '1.08');
});
afterAll(() => t?.close());

describe("conversion into any currency a gateway takes", () => {
  it('a EUR intent is taken through the EUR->USD rate, shown in USD at checkout and charged in USD', async () => {
    const p = await createPayment(t, apiKey, { amount: '100.00', currency: 'EUR' });
    const view = (await checkout(p.payment_id)).body.data;
    expect(view).toMatchObject({ payable: true, not_payable_reason: null });
    expect(view.gateways).toEqual([expect.objectContaining({ code: dual.code, amount: '108.00', currency: 'USD', converted: true, exchange_rate: '1.08' })]);
    const started = await t.request('POST', `/api/checkout/v1/payments/${p.payment_id}/transactions`, { body: { gateway: dual.code, gateway_trx_id: 'EURUSD0001' } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body.data).toMatchObject({ amount: '108.00', currency: 'USD' });
    const payment = (await t.request('GET', `/api/v1/payments/${p.payment_id}`, { token: apiKey })).body.data;
    expect(payment).toMatchObject({ amount: '108.00', currency: 'USD', requested_amount: '100.00', requested_currency: 'EUR', exchange_rate: '1.08' });
  });

  it('an inverse rate reaches a later currency too (1 USD = 0.5 GBP: 10 GBP -> 20 USD)', async () => {
    await seedRate(t, 'USD', 'GBP', '0.5');
    const p = await createPayment(t, apiKey, { amount: '10.00', currency: 'GBP' });
    expect((await checkout(p.payment_id)).body.data.gateways[0]).toMatchObject({ amount: '20.00', currency: 'USD' });
  });

  it("no rate to any of the gateway's currencies: refused with a message naming them all, nothing created", async () => {
    const before = Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents'))[0]!.n);
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '10.00', currency: 'JPY' } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toEqual({
      code: 'CURRENCY_NOT_SUPPORTED',
      field: 'currency',
      message: 'No gateway takes JPY, and no exchange rate converts JPY into any of BDT, USD',
    });
    expect(Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents'))[0]!.n)).toBe(before);
  });
});

describe('checkout: an intent no gateway can take is not payable', () => {
  it('after its rate is removed: payable false, the reason, no gateway buttons; starting is refused', async () => {
    await seedRate(t, 'CHF', 'USD', '1.10');
    const p = await createPayment(t, apiKey, { amount: '50.00', currency: 'CHF' });
    expect((await checkout(p.payment_id)).body.data.payable).toBe(true);
    await deleteExchangeRate(em(), 'CHF', 'USD');
    const view = (await checkout(p.payment_id)).body.data;
    expect(view).toMatchObject({ status: 'pending', payable: false, gateways: [], not_payable_reason: 'No payment method here takes CHF.' });
    const html = await fetch(`${t.baseUrl}/checkout/${p.payment_id}`).then((r) => r.text());
    expect(html).toContain('This payment cannot be paid here');
    expect(html).toContain('No payment method here takes CHF.');
    expect(html).not.toContain('class="pay-form"');
    const start = await t.request('POST', `/api/checkout/v1/payments/${p.payment_id}/transactions`, { body: { gateway: dual.code, gateway_trx_id: 'CHF0000001' } });
    expect(start.status).toBe(422);
    expect(start.body.errors[0]).toMatchObject({ code: 'CURRENCY_CONVERSION_FAILED', message: 'No exchange rate converts CHF into any of BDT, USD' });
  });
});

describe('success redirect carries the payment id', () => {
  async function completedRedirect(successUrl: string): Promise<{ id: string; redirect: string }> {
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '20.00', currency: 'BDT', success_url: successUrl } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id: string = res.body.data.payment_id;
    expect((await checkout(id)).body.data.redirect_url).toBeNull();
    const started = await t.request('POST', `/api/checkout/v1/payments/${id}/transactions`, {
      body: { gateway: dual.code, gateway_trx_id: `RD${id.replaceAll('-', '').slice(0, 10).toUpperCase()}` },
    });
    await completeTransaction(em(), (await getTransactionByTrxId(em(), started.body.data.trx_id)).id, { source: 'admin' });
    return { id, redirect: (await checkout(id)).body.data.redirect_url };
  }

  it('appends payment_id to the query, before a fragment', async () => {
    const { id, redirect } = await completedRedirect('https://shop.example/thanks?order=7#top');
    expect(redirect).toBe(`https://shop.example/thanks?order=7&payment_id=${id}#top`);
  });

  it('substitutes a {PAYMENT_ID} placeholder instead', async () => {
    const { id, redirect } = await completedRedirect('https://shop.example/orders/{PAYMENT_ID}/thanks');
    expect(redirect).toBe(`https://shop.example/orders/${id}/thanks`);
  });
});
