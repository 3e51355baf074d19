import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { makePng } from '../support/images.ts';
import { adminRequest } from '../integration/admin-support.ts';
import { axeViolationLines } from './support/axe.ts';
import { collectPageErrors, launchChromium } from './support/browser.ts';
import { startPublicTestServer } from './support/public-proxy.ts';

/**
 * The checkout a Bangladeshi customer reads (README, "Checkout languages and
 * branding"): Bangla from the browser's Accept-Language, English on request with
 * the choice remembered, Bangla digits and taka, the wallet's steps, and the
 * brand's logo, colour and support contact; axe-clean in both languages, at
 * 375 px and on a desktop.
 */

let t: TestContext;
let publicUrl: string;
let browser: Browser;
let ctx: BrowserContext | undefined;
let apiKey: string;
let bkash: GatewayView;

const BRAND_PINK = '#e2136e';

beforeAll(async () => {
  ({ t, publicUrl } = await startPublicTestServer());
  let brandId: number;
  ({ brandId, apiKey } = await t.createBrand('Dhaka Books'));
  bkash = await seedGateway(t, 'bkash', { sort_order: 1, max_amount: '500000.00' });
  const look = await adminRequest(t, 'PATCH', `/brands/${brandId}`, { primary_color: BRAND_PINK, support_phone: '+880 1700-000000', support_email: 'help@dhakabooks.example' });
  expect(look.status, JSON.stringify(look.body)).toBe(200);
  const logo = await adminRequest(t, 'PUT', `/brands/${brandId}/logo`, { content_base64: makePng(96, 96, [226, 19, 110]).toString('base64') });
  expect(logo.status, JSON.stringify(logo.body)).toBe(200);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

/** A browser whose language is `locale` (Chromium sends it as Accept-Language). */
async function open(width: 375 | 1280, locale: string): Promise<{ page: Page; errors: string[] }> {
  ctx =
    width === 375
      ? await browser.newContext({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale })
      : await browser.newContext({ viewport: { width: 1280, height: 900 }, locale });
  const page = await ctx.newPage();
  return { page, errors: collectPageErrors(page) };
}

async function createPayment(): Promise<string> {
  const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '125000.00', currency: 'BDT', reference: 'ORDER-BN-1' } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.payment_id as string;
}

const text = (page: Page, selector: string) => page.locator(selector).first().innerText();
/** The amount's two spans as one line (a flex row: innerText may break between them). */
const amount = async (page: Page) => ((await page.locator('.amount').first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

describe.each([375, 1280] as const)('at %i px', (width) => {
  it('Bangla from Accept-Language, with the brand look; English on the switch, remembered', async () => {
    const { page, errors } = await open(width, 'bn-BD');
    const id = await createPayment();
    await page.goto(`${publicUrl}/checkout/${id}`);

    expect(await page.getAttribute('html', 'lang')).toBe('bn');
    expect(await amount(page)).toBe('১,২৫,০০০.০০ ৳');
    expect(await text(page, '.due .label')).toBe('পরিশোধযোগ্য পরিমাণ');
    expect(await text(page, '.expires')).toMatch(/^পরিশোধের শেষ সময় .*\(বাংলাদেশ সময়\)$/);
    // The wallet's own steps, open under the only gateway.
    const steps = page.locator(`details[data-gateway="${bkash.code}"] .wallet-steps li`);
    expect(await steps.count()).toBeGreaterThanOrEqual(6);
    expect(await steps.nth(0).innerText()).toContain('*247#');
    expect(await steps.nth(1).innerText()).toBe('"Send Money" বেছে নিন।');

    // The logo is loaded (same origin, within the CSP) and the primary button wears the brand colour with readable text.
    const logo = page.locator('img.brand-logo');
    expect(await logo.getAttribute('alt')).toBe('Dhaka Books-এর লোগো');
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(96);
    const button = page.locator(`details[data-gateway="${bkash.code}"] button[type=submit]`);
    expect(await button.evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(226, 19, 110)');
    expect(await button.evaluate((b) => getComputedStyle(b).color)).toBe('rgb(255, 255, 255)');
    expect(await text(page, '.support')).toContain('+880 1700-000000');
    expect(await axeViolationLines(page), 'Bangla checkout').toEqual([]);

    // The page script speaks Bangla too.
    await button.click();
    await expect.poll(() => text(page, `details[data-gateway="${bkash.code}"] .form-error`)).toBe('যে ট্রানজেকশন আইডি পেয়েছেন তা লিখুন।');
    // A refusal from the API, in the page's words: an id another payment of the brand already claims.
    const other = await createPayment();
    const taken = await t.request('POST', `/api/checkout/v1/payments/${other}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: `BN${width}TAKEN1` } });
    expect(taken.status, JSON.stringify(taken.body)).toBe(201);
    await page.fill(`details[data-gateway="${bkash.code}"] input[name=gateway_trx_id]`, `BN${width}TAKEN1`);
    await button.click();
    await expect.poll(() => text(page, `details[data-gateway="${bkash.code}"] .form-error`)).toBe('এই ট্রানজেকশন আইডি আগেই ব্যবহার করা হয়েছে।');

    // Switch to English: the choice is remembered over the browser's Bangla.
    await page.click('.lang-switch a[lang="en"]');
    await page.waitForSelector('html[lang="en"]');
    expect(await amount(page)).toBe('125,000.00 BDT');
    expect(await steps.nth(1).innerText()).toBe('Choose "Send Money".');
    expect(await axeViolationLines(page), 'English checkout').toEqual([]);
    await page.goto(`${publicUrl}/checkout/${id}`);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await text(page, '.lang-switch .lang-current')).toBe('English');

    // And back to Bangla.
    await page.click('.lang-switch a[lang="bn"]');
    await page.waitForSelector('html[lang="bn"]');
    await page.goto(`${publicUrl}/checkout/${id}`);
    expect(await page.getAttribute('html', 'lang')).toBe('bn');
    // The taken id's 409 is logged by the browser; nothing else (a CSP refusal would be) may be.
    expect(errors.filter((e) => !/status of 409/.test(e))).toEqual([]);
  });

  it('English for an English browser; the payment link page in Bangla is axe-clean too', async () => {
    const { page, errors } = await open(width, 'en-US');
    const id = await createPayment();
    await page.goto(`${publicUrl}/checkout/${id}`);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await text(page, '.due .label')).toBe('Amount due');

    const link = await t.request('POST', '/api/v1/payment-links', { token: apiKey, body: { currency: 'BDT', amount: '500.00', description: 'Stall 4' } });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    await page.goto(`${link.body.data.url}?lang=bn`);
    expect(await page.getAttribute('html', 'lang')).toBe('bn');
    expect(await amount(page)).toBe('৫০০.০০ ৳');
    expect(await axeViolationLines(page), 'Bangla payment link').toEqual([]);
    expect(errors).toEqual([]);
  });
});
