import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { collectPageErrors, launchChromium, phoneContext } from './support/browser.ts';
import { startPublicTestServer } from './support/public-proxy.ts';

/**
 * In a real Chromium: the checkout shows one number to send when the customer
 * pays the fee, copy buttons put the amount and the account number on the
 * clipboard, the deadline names the brand's time zone; and a payment link with
 * a customer-entered amount ends on the normal checkout. No console errors (a
 * CSP violation is one).
 */

const RESULTS = path.resolve('test-results');

let t: TestContext;
let publicUrl: string;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let errors: string[];
let apiKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  mkdirSync(RESULTS, { recursive: true });
  ({ t, publicUrl } = await startPublicTestServer({ WORKERS_ENABLED: 'false' }));
  const brand = await t.createBrand('Dhaka Crafts', { mode: 'test' });
  apiKey = brand.apiKey;
  await t.sql("UPDATE brands SET timezone = 'Asia/Dhaka' WHERE id = $1", [brand.brandId]);
  bkash = await seedGateway(t, 'bkash', { fee_payer: 'customer' });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});
beforeEach(async () => {
  ctx = await phoneContext(browser);
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: publicUrl });
  page = await ctx.newPage();
  errors = collectPageErrors(page);
});
afterEach(async () => {
  await ctx?.close();
});

const text = async (selector: string) => (await page.innerText(selector)).replace(/\s+/g, ' ').trim();

describe('checkout clarity', () => {
  it('one number to send (amount + fee), copy buttons for it and the account, the deadline in the brand time zone', async () => {
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '1250.00', currency: 'BDT', reference: 'CRAFT-1' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const expiresAt = new Date(res.body.data.expires_at);
    await page.goto(`${publicUrl}/checkout/${res.body.data.payment_id}`);

    const panel = `details[data-gateway="${bkash.code}"]`;
    // The only gateway: its panel is open already. 1.85 % of 1,250.00 = 23.125 -> 23.13;
    // the customer pays it: 1,273.13 is the one number.
    expect(await page.locator(panel).getAttribute('open')).not.toBeNull();
    expect(await text(`${panel} .send-amount`)).toBe('1,273.13 BDT');
    expect(await text(`${panel} .fee-note`)).toBe('Includes the bKash fee of 23.13 BDT.');
    // No cost breakdown; the wallet's own steps (an ordered list) repeat the one number only.
    expect(await page.locator(`${panel} ol:not(.wallet-steps), ${panel} .steps, ${panel} .costs`).count()).toBe(0);
    expect(await text(`${panel} .wallet-steps`)).toContain('1,273.13');
    expect(await page.locator(`${panel}`).innerText()).not.toContain('1,250.00');

    await page.click(`${panel} button.copy[aria-label="Copy amount"]`);
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('1273.13');
    expect(await text(`${panel} button.copy[aria-label="Copy amount"]`)).toBe('Copied');
    await page.click(`${panel} button.copy[aria-label="Copy account number"]`);
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('01700000000');

    // Dhaka is UTC+06:00 all year.
    const local = new Date(expiresAt.getTime() + 6 * 3600_000);
    const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const pad = (n: number) => String(n).padStart(2, '0');
    const expected = `${local.getUTCDate()} ${months[local.getUTCMonth()]} ${local.getUTCFullYear()}, ${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())} (UTC+06:00 Asia/Dhaka)`;
    expect(await text('.expires time')).toBe(expected);

    await page.screenshot({ path: path.join(RESULTS, 'checkout-fee-payer-copy.png'), fullPage: true });
    expect(errors).toEqual([]);
  });
});

describe('payment link visit', () => {
  it('a customer-entered amount: the link page takes the amount and ends on the normal checkout with it', async () => {
    const res = await t.request('POST', '/api/v1/payment-links', {
      token: apiKey,
      body: { currency: 'BDT', min_amount: '100.00', max_amount: '5000.00', description: 'Donation to the craft fair' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const link = res.body.data;
    await page.goto(`${publicUrl}/pay/${link.id}`);
    expect(await text('h1.brand')).toBe('Dhaka Crafts');
    expect(await text('.reference')).toBe('Donation to the craft fair');
    await page.screenshot({ path: path.join(RESULTS, 'payment-link-form.png'), fullPage: true });

    await page.fill('input[name=amount]', '50');
    await page.click('button[type=submit]');
    await page.waitForSelector('.form-error');
    expect(await text('.form-error')).toBe('Enter at least 100.00 BDT');

    await page.fill('input[name=amount]', '750');
    await Promise.all([page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/), page.click('button[type=submit]')]);
    expect(await text('.amount')).toBe('750.00 BDT');
    expect(await page.locator(`details[data-gateway="${bkash.code}"]`).count()).toBe(1);
    await page.screenshot({ path: path.join(RESULTS, 'payment-link-checkout.png'), fullPage: true });
    // The refused amount came back as a 400 page (the browser logs that status); nothing else.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);

    // The QR code the merchant prints is an image of the link.
    const qr = await page.request.get(link.qr_png_url.replace(/^https?:\/\/[^/]+/, publicUrl));
    expect(qr.status()).toBe(200);
    expect(qr.headers()['content-type']).toBe('image/png');
  });
});
