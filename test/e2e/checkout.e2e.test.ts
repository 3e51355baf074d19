import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { completeTransaction, getTransactionByTrxId } from '../../server/domain/payments/transactions.ts';
import { ensureSandboxGateway } from '../../server/domain/sandbox/gateway.ts';
import { collectPageErrors, launchChromium, phoneContext, startMerchantSite } from './support/browser.ts';
import { startPublicTestServer } from './support/public-proxy.ts';

/**
 * A customer paying on a phone, in a real Chromium: the manual gateway up to
 * `awaiting_verification` and the page updating itself when the payment is
 * verified; the sandbox gateway approved and declined; an expired link; cancel.
 * Every page must run without a console error (a CSP violation is one).
 */

const RESULTS = path.resolve('test-results');

let t: TestContext;
let publicUrl: string;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let errors: string[];
let apiKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;

beforeAll(async () => {
  mkdirSync(RESULTS, { recursive: true });
  ({ t, publicUrl } = await startPublicTestServer({ WORKERS_ENABLED: 'true' }));
  // Test mode: the walk includes the sandbox gateway, which takes only test payments.
  ({ apiKey } = await t.createBrand('Dhaka Books', { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash', { sort_order: 1 });
  sandbox = await ensureSandboxGateway(t.runtime.deps.db);
  site = await startMerchantSite();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
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

let order = 1000;
async function createPayment(body: Record<string, unknown> = {}): Promise<{ id: string; order: number }> {
  order++;
  const res = await t.request('POST', '/api/v1/payments', {
    token: apiKey,
    body: {
      amount: '1250.00',
      currency: 'BDT',
      reference: `ORDER-${order}`,
      success_url: `${site.url}/thanks?order=${order}`,
      cancel_url: `${site.url}/cart`,
      ...body,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  // The merchant hands out the checkout URL built on the public address.
  expect(res.body.data.checkout_url).toBe(`${publicUrl}/checkout/${res.body.data.payment_id}`);
  return { id: res.body.data.payment_id, order };
}

async function latest(paymentId: string) {
  const [row] = await t.sql<{ trx_id: string; status: string; gateway_trx_id: string | null; completion_source: string | null }>(
    `SELECT t.trx_id, t.status, t.gateway_trx_id, t.completion_source FROM transactions t JOIN payment_intents i ON i.id = t.intent_id
      WHERE i.uuid = $1 ORDER BY t.id DESC LIMIT 1`,
    [paymentId],
  );
  return row;
}

const text = async (selector: string) => (await page.innerText(selector)).replace(/\s+/g, ' ').trim();

describe('paying with a manual gateway', () => {
  it('shows where to send the money, takes the transaction id, waits, and forwards to the success URL once verified', async () => {
    const p = await createPayment();
    await page.goto(`${publicUrl}/checkout/${p.id}`);
    expect(await text('h1.brand')).toBe('Dhaka Books');
    expect(await text('.amount')).toBe('1,250.00 BDT');
    expect(await text('.reference')).toBe(`Reference ORDER-${p.order}`);

    const panel = `details[data-gateway="${bkash.code}"]`;
    await page.click(`${panel} summary`);
    expect(await text(`${panel} .account`)).toBe('01700000000');
    expect(await text(`${panel} .instructions`)).toBe('Send Money to the number above, then enter the TrxID.');
    // The merchant pays bKash's fee here: one number, the amount, and no fee shown.
    expect(await text(`${panel} .send-amount`)).toBe('1,250.00 BDT');
    expect(await page.locator(`${panel}`).innerText()).not.toContain('23.13');

    // Submitting without the id is caught on the page.
    await page.click(`${panel} button[type=submit]`);
    expect(await text(`${panel} .form-error`)).toBe('Enter the transaction ID you received.');

    await page.fill(`${panel} input[name=gateway_trx_id]`, '9ABCD12345');
    await page.fill(`${panel} input[name=sender_number]`, '01712345678');
    await page.click(`${panel} button[type=submit]`);
    await page.waitForSelector('main[data-status="awaiting_verification"]');
    expect(await text('.status-title')).toBe('Waiting for verification');
    expect(await text('.status strong.mono')).toBe('9ABCD12345');
    const trx = await latest(p.id);
    expect(trx).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: '9ABCD12345' });
    await page.screenshot({ path: path.join(RESULTS, 'checkout-mobile-waiting.png') });

    // Verified (as an SMS match or an admin would): the open page notices, confirms and forwards.
    const em = t.runtime.deps.db;
    await completeTransaction(em, (await getTransactionByTrxId(em, trx!.trx_id)).id, { source: 'admin' });
    await page.waitForSelector('main[data-status="completed"]', { timeout: 15_000 });
    expect(await text('.status-title')).toBe('Payment received');
    await page.screenshot({ path: path.join(RESULTS, 'checkout-mobile-completed.png') });
    await page.waitForURL(`${site.url}/thanks?order=${p.order}&payment_id=${p.id}`, { timeout: 15_000 });
    expect(await text('h1')).toBe('Thanks for your order');
    expect(errors).toEqual([]);
  });

  it('shows a refusal on the page and lets the customer correct it', async () => {
    const taken = await createPayment();
    const first = await t.request('POST', `/api/checkout/v1/payments/${taken.id}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'USEDID0001' } });
    expect(first.status).toBe(201);
    const p = await createPayment();
    await page.goto(`${publicUrl}/checkout/${p.id}`);
    const panel = `details[data-gateway="${bkash.code}"]`;
    await page.click(`${panel} summary`);
    await page.fill(`${panel} input[name=gateway_trx_id]`, 'usedid0001');
    await page.click(`${panel} button[type=submit]`);
    await page.waitForSelector(`${panel} .form-error:not([hidden])`);
    expect(await text(`${panel} .form-error`)).toBe('This gateway transaction id was already used');
    await page.fill(`${panel} input[name=gateway_trx_id]`, 'FRESHID001');
    await page.click(`${panel} button[type=submit]`);
    await page.waitForSelector('main[data-status="awaiting_verification"]');
    expect(errors.filter((e) => !e.includes('409'))).toEqual([]);
  });
});

describe('paying with the sandbox gateway', () => {
  it('approve: redirected to the sandbox, back to the checkout, completed by the callback, then to the success URL', async () => {
    const p = await createPayment({ amount: '20.00', currency: 'USD' });
    await page.goto(`${publicUrl}/checkout/${p.id}`);
    // bKash takes BDT only and no USD rate exists: only the sandbox (USD) is offered.
    expect(await page.locator('details.gateway').count()).toBe(1);
    expect(await text(`details[data-gateway="${sandbox.code}"] summary`)).toBe('Sandbox (test card) 20.00 USD');
    await page.click(`details[data-gateway="${sandbox.code}"] button[type=submit]`);
    await page.waitForURL(/\/sandbox\/pay\/[A-Za-z0-9_-]{43}$/);
    expect(await text('.sandbox-banner')).toBe('Sandbox: test payment, no real money moves');
    expect(await text('.amount')).toBe('20.00 USD');
    await page.screenshot({ path: path.join(RESULTS, 'checkout-mobile-sandbox.png') });
    await page.click('#approve');
    await page.waitForURL(`${site.url}/thanks?order=${p.order}&payment_id=${p.id}`, { timeout: 20_000 });
    expect(await latest(p.id)).toMatchObject({ status: 'completed', completion_source: 'gateway_callback' });
    expect((await latest(p.id))!.gateway_trx_id).toMatch(/^SBX/);
    expect(errors).toEqual([]);
  });

  it('decline: back on the checkout, which says the payment did not go through and offers the gateways again', async () => {
    const p = await createPayment();
    await page.goto(`${publicUrl}/checkout/${p.id}`);
    await page.click(`details[data-gateway="${sandbox.code}"] summary`);
    await page.click(`details[data-gateway="${sandbox.code}"] button[type=submit]`);
    await page.waitForURL(/\/sandbox\/pay\//);
    await page.click('#decline');
    await page.waitForURL(`${publicUrl}/checkout/${p.id}`);
    await page.waitForSelector('main[data-status="failed"]', { timeout: 20_000 });
    expect(await text('.notice.error')).toBe(
      'Your payment with Sandbox (test card) did not go through: Declined by the gateway: The customer declined on the sandbox page. You can try again.',
    );
    expect(await page.locator('details.gateway').count()).toBe(2);
    expect(await latest(p.id)).toMatchObject({ status: 'failed' });
    await page.screenshot({ path: path.join(RESULTS, 'checkout-mobile-declined.png'), fullPage: true });
    expect(errors).toEqual([]);
  });
});

describe('an expired link', () => {
  it('shows "Payment link has expired" and accepts nothing', async () => {
    const p = await createPayment();
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [p.id]);
    await page.goto(`${publicUrl}/checkout/${p.id}`);
    expect(await text('.status-title')).toBe('Payment link has expired');
    expect(await page.locator('form').count()).toBe(0);
    expect(await page.locator('input, #cancel, details').count()).toBe(0);
    expect(await page.getAttribute('.status a.button', 'href')).toBe(`${site.url}/cart`);
    await page.screenshot({ path: path.join(RESULTS, 'checkout-mobile-expired.png') });
    expect(errors).toEqual([]);
  });

  it('an open page turns into the expired message by itself when the time comes', async () => {
    const p = await createPayment();
    await t.sql(`UPDATE payment_intents SET expires_at = now() + interval '3 seconds' WHERE uuid = $1`, [p.id]);
    await page.goto(`${publicUrl}/checkout/${p.id}`);
    expect(await page.locator('details.gateway').count()).toBe(2);
    await page.waitForSelector('main[data-status="expired"]', { timeout: 15_000 });
    expect(await text('.status-title')).toBe('Payment link has expired');
    expect(errors).toEqual([]);
  });
});

describe('cancelling', () => {
  it('sends the customer to the cancel URL', async () => {
    const p = await createPayment();
    await page.goto(`${publicUrl}/checkout/${p.id}`);
    await page.click('#cancel');
    await page.waitForURL(`${site.url}/cart`);
    expect(await text('h1')).toBe('Your cart');
    expect(errors).toEqual([]);
  });
});

describe('on a phone', () => {
  it('fits 375 px without sideways scrolling; the screenshot is saved', async () => {
    await seedGateway(t, 'nagad', { sort_order: 2 });
    const p = await createPayment();
    await page.goto(`${publicUrl}/checkout/${p.id}`);
    await page.click(`details[data-gateway="${bkash.code}"] summary`);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(375);
    // Tap targets are at least 44 px tall.
    for (const selector of ['details.gateway summary', `details[data-gateway="${bkash.code}"] button[type=submit]`, `details[data-gateway="${bkash.code}"] input[name=gateway_trx_id]`]) {
      const box = await page.locator(selector).first().boundingBox();
      expect(box!.height, selector).toBeGreaterThanOrEqual(44);
    }
    await page.screenshot({ path: path.join(RESULTS, 'checkout-mobile.png'), fullPage: true });
    expect(errors).toEqual([]);
  });
});
