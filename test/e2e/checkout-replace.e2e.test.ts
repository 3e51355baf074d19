import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import type { TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { collectPageErrors, launchChromium, phoneContext } from './support/browser.ts';
import { startPublicTestServer } from './support/public-proxy.ts';

/**
 * The customer typed a wrong transaction id: on the waiting page, in a real
 * Chromium (CSP on), "Wrong transaction ID? Change it" puts the right one in
 * its place, and the page says how many changes are left.
 */

let t: TestContext;
let publicUrl: string;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let errors: string[];
let apiKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  ({ t, publicUrl } = await startPublicTestServer({ WORKERS_ENABLED: 'false' }));
  ({ apiKey } = await t.createBrand('Dhaka Books'));
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

const text = async (selector: string) => (await page.innerText(selector)).replace(/\s+/g, ' ').trim();

describe('changing a wrong transaction id', () => {
  it('replaces the id from the waiting page', async () => {
    const created = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '1250.00', currency: 'BDT' } });
    const paymentId = created.body.data.payment_id;
    const submitted = await t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'WRONG00001' } });
    expect(submitted.status).toBe(201);

    await page.goto(`${publicUrl}/checkout/${paymentId}`);
    await page.waitForSelector('main[data-status="awaiting_verification"]');
    expect(await text('.status strong.mono')).toBe('WRONG00001');
    await page.click('details.replace summary');
    expect(await text('.replace-form')).toContain('You can change it 3 more times.');

    // An empty id is caught on the page.
    await page.click('.replace-form button[type=submit]');
    expect(await text('.replace-form .form-error')).toBe('Enter the correct transaction ID.');

    await page.fill('.replace-form input[name=gateway_trx_id]', '9RIGHT1234');
    await page.click('.replace-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('.status strong.mono')?.textContent === '9RIGHT1234');
    expect(await text('.status-title')).toBe('Waiting for verification');
    await page.click('details.replace summary');
    expect(await text('.replace-form')).toContain('You can change it 2 more times.');
    const [row] = await t.sql<{ gateway_trx_id: string; status: string }>(
      'SELECT t.gateway_trx_id, t.status FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1',
      [paymentId],
    );
    expect(row).toEqual({ gateway_trx_id: '9RIGHT1234', status: 'awaiting_verification' });
    expect(errors).toEqual([]);
  });
});
