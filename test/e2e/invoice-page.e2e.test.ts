import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PaycollectMerchant } from '../../clients/merchant/index.ts';
import type { TestContext } from '../support/harness.ts';
import { pairDevice, type PairedDevice } from '../support/device.ts';
import { seedGateway } from '../support/seed.ts';
import { creditTemplate } from '../support/sms-matching.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { axeViolationLines } from './support/axe.ts';
import { collectPageErrors, launchChromium, phoneContext } from './support/browser.ts';
import { payByBkashSms } from './support/pay-by-sms.ts';
import { startPublicTestServer } from './support/public-proxy.ts';

/**
 * The hosted invoice page in a real Chromium, at 375 px and on a desktop: axe
 * clean, no sideways scrolling, no console error (a CSP violation is one); Pay
 * continues on the normal checkout, where the customer submits the bKash
 * TrxID and the merchant's phone forwards bKash's SMS, which completes the
 * payment; the invoice then shows `paid`.
 */

const RESULTS = path.resolve('test-results');
const PAYER = '01712345616';

let t: TestContext;
let publicUrl: string;
let browser: Browser;
let ctx: BrowserContext | undefined;
let merchant: PaycollectMerchant;
let phone: PairedDevice;
let bkash: GatewayView;

beforeAll(async () => {
  mkdirSync(RESULTS, { recursive: true });
  ({ t, publicUrl } = await startPublicTestServer({ WORKERS_ENABLED: 'false' }));
  const brand = await t.createBrand('Sylhet Tea House');
  merchant = new PaycollectMerchant({ apiKey: brand.apiKey, baseUrl: t.baseUrl });
  phone = await pairDevice(t, { brandId: brand.brandId, name: 'Counter phone' });
  bkash = await seedGateway(t, 'bkash', { sms_templates: [creditTemplate] });
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

async function open(width: 375 | 1280): Promise<{ page: Page; errors: string[] }> {
  ctx = width === 375 ? await phoneContext(browser) : await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await ctx.newPage();
  return { page, errors: collectPageErrors(page) };
}

const due = () => new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
const pagePath = (url: string) => `${publicUrl}${new URL(url).pathname}`;

describe.each([375, 1280] as const)('at %i px', (width) => {
  it('shows the invoice axe clean; Pay goes through the bKash checkout, the SMS verifies it, and the invoice ends paid', async () => {
    const invoice = await merchant.invoices.create({
      customer: { name: 'সুমাইয়া আক্তার', email: `sumaiya${width}@example.com` },
      currency: 'BDT',
      due_date: due(),
      memo: 'ধন্যবাদ। Thank you for your order.',
      lines: [
        { description: 'চা পাতা (Tea leaves) 1 kg', quantity: '2', unit_price: '450.00' },
        { description: 'Delivery to Zindabazar', quantity: '1', unit_price: '60.00' },
      ],
      status: 'open',
    });
    const { page, errors } = await open(width);
    await page.goto(pagePath(invoice.hosted_url));
    expect(await page.innerText('h1')).toBe('Sylhet Tea House');
    expect(await page.innerText('#invoice-remaining')).toContain('960.00');
    expect(await axeViolationLines(page), 'open invoice').toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    // The Bengali web font has loaded (the customer's name and a line are Bangla).
    expect(await page.evaluate(async () => { await document.fonts.ready; return document.fonts.check('16px "Noto Sans Bengali"', 'সুমাইয়া'); })).toBe(true);
    await page.screenshot({ path: path.join(RESULTS, `invoice-${width}-open.png`), fullPage: true });

    await page.click('#invoice-pay');
    await page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/);
    // The customer pays with bKash; the merchant's phone forwards bKash's SMS for the money, which completes the payment,
    // and the checkout returns to the invoice (its success URL). The balance follows the previous run's SMS.
    await payByBkashSms(page, {
      t, phone, gatewayCode: bkash.code, trxId: `INV${width}E2E01`.slice(0, 10), payer: PAYER, amount: '960.00',
      balance: width === 375 ? '10,960.00' : '11,920.00', deviceMessageId: `inv-e2e-${width}`, sendAmount: '960.00', returnTo: /\/invoices\/inv_/,
    });
    expect(await page.innerText('.invoice-status')).toBe('Paid');
    expect(await page.locator('#invoice-pay').count()).toBe(0);
    expect(await axeViolationLines(page), 'paid invoice').toEqual([]);
    await page.screenshot({ path: path.join(RESULTS, `invoice-${width}-paid.png`), fullPage: true });
    expect((await merchant.invoices.retrieve(invoice.id)).status).toBe('paid');

    await page.goto(`${pagePath(invoice.hosted_url)}?lang=bn`);
    expect(await page.getAttribute('html', 'lang')).toBe('bn');
    expect(await axeViolationLines(page), 'paid invoice in Bangla').toEqual([]);
    expect(errors).toEqual([]);
  });
});
