import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PaycollectMerchant } from '../../clients/merchant/index.ts';
import { adminRequest } from '../integration/admin-support.ts';
import type { TestContext } from '../support/harness.ts';
import { pairDevice, type PairedDevice } from '../support/device.ts';
import { makePng } from '../support/images.ts';
import { seedGateway } from '../support/seed.ts';
import { startSmtpSink } from '../support/smtp-sink.ts';
import { creditTemplate } from '../support/sms-matching.ts';
import { waitFor } from '../support/wait.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { axeViolationLines } from './support/axe.ts';
import { collectPageErrors, launchChromium } from './support/browser.ts';
import { payByBkashSms } from './support/pay-by-sms.ts';
import { startPublicTestServer } from './support/public-proxy.ts';

/**
 * The whole invoice as a Bangladeshi merchant and customer live it: the
 * merchant (SDK) sends an invoice in Bangla; the e-mail arrives at a real SMTP
 * server; its link opens the invoice in Bangla with the brand's logo, colour
 * and Bangla digits; the customer pays through the bKash checkout in Bangla;
 * the merchant's phone forwards bKash's SMS, which verifies the payment; the
 * invoice ends paid (পরিশোধিত). At 375 px and on a desktop, axe clean.
 */

const RESULTS = path.resolve('test-results');
const PAYER = '01712345617';
const BRAND_GREEN = '#006a4e';

let t: TestContext;
let publicUrl: string;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
let browser: Browser;
let ctx: BrowserContext | undefined;
let merchant: PaycollectMerchant;
let phone: PairedDevice;
let bkash: GatewayView;

beforeAll(async () => {
  mkdirSync(RESULTS, { recursive: true });
  smtp = await startSmtpSink({ user: 'invoices', pass: 'invoice-bn-smtp-pass-2c9d' });
  ({ t, publicUrl } = await startPublicTestServer({ WORKERS_ENABLED: 'false', SMTP_URL: smtp.url, RECEIPT_EMAIL_FROM: 'billing@pay.example.com' }));
  const brand = await t.createBrand('Sylhet Tea House');
  const look = await adminRequest(t, 'PATCH', `/brands/${brand.brandId}`, { primary_color: BRAND_GREEN, support_phone: '+880 1711-000000' });
  expect(look.status, JSON.stringify(look.body)).toBe(200);
  const logo = await adminRequest(t, 'PUT', `/brands/${brand.brandId}/logo`, { content_base64: makePng(96, 96, [0, 106, 78]).toString('base64') });
  expect(logo.status, JSON.stringify(logo.body)).toBe(200);
  merchant = new PaycollectMerchant({ apiKey: brand.apiKey, baseUrl: t.baseUrl });
  phone = await pairDevice(t, { brandId: brand.brandId, name: 'Counter phone' });
  bkash = await seedGateway(t, 'bkash', { sms_templates: [creditTemplate] });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await smtp?.close();
});
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

const due = () => new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);

describe.each([375, 1280] as const)('at %i px', (width) => {
  it('an invoice sent in Bangla with the brand logo is paid by bKash, verified from the SMS', async () => {
    const email = `rahim${width}@example.com`;
    const created = await merchant.invoices.create({
      customer: { name: 'রহিম উদ্দিন', email },
      currency: 'BDT',
      due_date: due(),
      memo: 'ধন্যবাদ।',
      lines: [{ description: 'চা পাতা ১ কেজি', quantity: '3', unit_price: '400.00' }],
    });
    expect(created.status).toBe('draft');
    const sent = await merchant.invoices.send(created.id, { language: 'bn' });
    expect(sent.status).toBe('open');

    // The e-mail is in Bangla and its link opens the page in Bangla.
    const [mail] = await waitFor(async () => smtp.mails.filter((m) => m.to.includes(email)), (m) => m.length === 1);
    expect(mail!.subject).toContain('চালান');
    // Non-ASCII text goes base64-encoded (nodemailer's choice for mostly non-Latin text).
    const text = /Content-Transfer-Encoding: base64/i.test(mail!.headers) ? Buffer.from(mail!.body.replace(/\s+/g, ''), 'base64').toString('utf8') : mail!.body;
    expect(text).toContain('রহিম উদ্দিন');
    // Its amount as the page writes it: Bangla digits and the taka sign.
    expect(mail!.subject).toContain('১,২০০.০০ ৳');
    expect(text).toContain('১,২০০.০০ ৳');
    const link = /https?:\/\/\S+\/invoices\/inv_[A-Za-z0-9_-]+\?lang=bn/.exec(text)?.[0];
    expect(link, text).toBeDefined();

    // A browser that does not ask for Bangla: the e-mail's link chooses it.
    ctx =
      width === 375
        ? await browser.newContext({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-US' })
        : await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    const page = await ctx.newPage();
    const errors = collectPageErrors(page);
    await page.goto(`${publicUrl}${new URL(link!).pathname}${new URL(link!).search}`);
    expect(await page.getAttribute('html', 'lang')).toBe('bn');
    expect(await page.innerText('h1')).toBe('Sylhet Tea House');
    // Bangla digits and the taka: ১,২০০.০০
    expect(await page.innerText('#invoice-remaining')).toContain('১,২০০.০০');
    const logo = page.locator('img.brand-logo');
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(96);
    expect(await page.locator('#invoice-pay').evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(0, 106, 78)');
    expect(await page.locator('.support-phone').innerText()).toBe('+880 1711-000000');
    expect(await axeViolationLines(page), 'open invoice in Bangla').toEqual([]);
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(RESULTS, `invoice-bn-${width}-open.png`), fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);

    await page.click('#invoice-pay');
    await page.waitForURL(/\/checkout\/[0-9a-f-]{36}$/);
    // The checkout keeps the language the customer chose.
    expect(await page.getAttribute('html', 'lang')).toBe('bn');
    expect(await axeViolationLines(page), 'checkout in Bangla').toEqual([]);
    // The merchant's phone forwards bKash's SMS; its balance follows the previous run's (the chain checks it).
    await payByBkashSms(page, {
      t, phone, gatewayCode: bkash.code, trxId: `BNV${width}E2E01`.slice(0, 10), payer: PAYER, amount: '1200.00',
      balance: width === 375 ? '11,200.00' : '12,400.00', deviceMessageId: `inv-bn-${width}`, returnTo: /\/invoices\/inv_/,
    });
    expect(await page.getAttribute('html', 'lang')).toBe('bn');
    expect(await page.innerText('.invoice-status')).toBe('পরিশোধিত');
    expect(await page.locator('#invoice-pay').count()).toBe(0);
    expect(await axeViolationLines(page), 'paid invoice in Bangla').toEqual([]);
    expect((await merchant.invoices.retrieve(created.id)).status).toBe('paid');
    expect(errors).toEqual([]);
  });
});
