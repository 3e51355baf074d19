import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { completeTransaction, getTransactionByTrxId } from '../../server/domain/payments/transactions.ts';
import { collectPageErrors, launchChromium, phoneContext } from './support/browser.ts';
import { startPublicTestServer, type PublicProxy } from './support/public-proxy.ts';

/**
 * The waiting checkout page learns of the completion by server push: in a real
 * Chromium, the page waiting for verification switches to "Payment received"
 * within about a second of the completion, with no poll of the payment at all
 * (its one request to the API is the status stream). When the stream is
 * refused, the page falls back to polling and still gets there.
 */

let t: TestContext;
let proxy: PublicProxy;
let publicUrl: string;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let errors: string[];
let apiKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  ({ t, proxy, publicUrl } = await startPublicTestServer({ WORKERS_ENABLED: 'false' }));
  ({ apiKey } = await t.createBrand('Push Books'));
  bkash = await seedGateway(t, 'bkash');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});
beforeEach(async () => {
  ctx = await phoneContext(browser);
  page = await ctx.newPage();
  errors = collectPageErrors(page);
});
afterEach(async () => {
  await ctx?.close();
});

let n = 0;
/** A payment the customer has submitted a TrxID for (its service trx id), and the API requests the page makes for it. */
async function waitingPage(): Promise<{ paymentId: string; trxId: string; requests: string[] }> {
  const { payment_id } = await createPayment(t, apiKey, { amount: '880.00' });
  const trxId = `PUSH${String(++n).padStart(6, '0')}`;
  const pay = await t.request('POST', `/api/checkout/v1/payments/${payment_id}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: trxId } });
  expect(pay.status, JSON.stringify(pay.body)).toBe(201);
  const trx: string = pay.body.data.trx_id;
  const requests: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/api/')) requests.push(`${r.method()} ${url.pathname}`);
  });
  await page.goto(`${publicUrl}/checkout/${payment_id}`);
  await page.waitForSelector('main[data-status="awaiting_verification"]');
  return { paymentId: payment_id, trxId: trx, requests };
}

async function complete(trxId: string): Promise<void> {
  const em = t.runtime.deps.db;
  await completeTransaction(em, (await getTransactionByTrxId(em, trxId)).id, { source: 'admin' });
}

describe('the waiting checkout page', () => {
  it('switches to the completed state by push, without polling', async () => {
    const { paymentId, trxId, requests } = await waitingPage();
    const stream = `GET /api/checkout/v1/payments/${paymentId}/status-stream`;
    // The stream is open (its first event arrived) before the payment completes.
    await expect.poll(() => requests.includes(stream), { timeout: 5000 }).toBe(true);
    await page.waitForTimeout(300);

    await complete(trxId);
    // The page polls only when its stream fails, so with no poll below only the push can
    // have told it. How fast is measured by the benchmark (BENCHMARKS.md), not asserted here.
    await page.waitForSelector('main[data-status="completed"]', { timeout: 15_000 });
    expect(await page.innerText('.status-title')).toBe('Payment received');
    // The only API call was the stream; the payment itself was never polled.
    expect(requests.filter((r) => r === `GET /api/checkout/v1/payments/${paymentId}`)).toEqual([]);
    expect(requests.filter((r) => r === stream).length).toBeGreaterThanOrEqual(1);
    expect(errors).toEqual([]);
  });

  it('falls back to polling when the stream is refused, and still shows the completion', async () => {
    const { paymentId } = await createPayment(t, apiKey, { amount: '880.00' }).then((p) => ({ paymentId: p.payment_id }));
    const trxId = `PUSH${String(++n).padStart(6, '0')}`;
    const pay = await t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: trxId } });
    expect(pay.status).toBe(201);
    const trx: string = pay.body.data.trx_id;
    proxy.refuseNext(`/api/checkout/v1/payments/${paymentId}/status-stream`, 10, 503);
    const requests: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith('/api/')) requests.push(`${r.method()} ${url.pathname}`);
    });
    await page.goto(`${publicUrl}/checkout/${paymentId}`);
    await page.waitForSelector('main[data-status="awaiting_verification"]');
    await complete(trx);
    await page.waitForSelector('main[data-status="completed"]', { timeout: 15_000 });
    // It got there by polling the payment (slower than push, on purpose).
    expect(requests).toContain(`GET /api/checkout/v1/payments/${paymentId}`);
    expect(errors.filter((e) => !e.includes('503'))).toEqual([]);
  });
});
