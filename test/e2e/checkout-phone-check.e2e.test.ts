import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { creditTemplate, creditWithBalance } from '../support/sms-matching.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { collectPageErrors, launchChromium, phoneContext } from './support/browser.ts';
import { startPublicTestServer } from './support/public-proxy.ts';

/**
 * Pull-on-submit on the page (docs/recovery.md): a customer submits a TrxID no
 * SMS proves yet, the page says it is checking with the merchant's phone, and
 * turns by push (the status stream) into "Payment received" when the phone
 * re-sends the SMS, or into the ordinary "Waiting for verification" when the
 * phone answers without it. Never an error for the customer.
 */

let t: TestContext;
let publicUrl: string;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let errors: string[];
let apiKey: string;
let phone: PairedDevice;
let bkash: GatewayView;
const PAYER = '01712345515';

beforeAll(async () => {
  ({ t, publicUrl } = await startPublicTestServer({ WORKERS_ENABLED: 'false' }));
  const brand = await t.createBrand('Phone Check Books');
  apiKey = brand.apiKey;
  phone = await pairDevice(t, { brandId: brand.brandId, name: 'Counter phone' });
  bkash = await seedGateway(t, 'bkash', { sms_templates: [creditTemplate] });
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
/** The customer submitted a TrxID no SMS proves: the page is open on "checking with the merchant's phone". */
async function checkingPage(amount: string): Promise<{ paymentId: string; trxId: string }> {
  const { payment_id } = await createPayment(t, apiKey, { amount });
  const trxId = `PULL${String(++n).padStart(6, '0')}`;
  const pay = await t.request('POST', `/api/checkout/v1/payments/${payment_id}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: trxId, sender_number: PAYER } });
  expect(pay.status, JSON.stringify(pay.body)).toBe(201);
  await page.goto(`${publicUrl}/checkout/${payment_id}`);
  await page.waitForSelector('main[data-status="awaiting_verification"][data-checking-phone="true"]');
  expect(await page.innerText('.status-title')).toBe("Checking with the merchant's phone");
  // The stream is open before the phone answers.
  await page.waitForTimeout(500);
  return { paymentId: payment_id, trxId };
}

/** The phone answers its open commands, re-sending `sms` (none: it had nothing in the window). */
async function phoneAnswers(sms: Array<{ sender: string; body: string }>): Promise<void> {
  const commands = await deviceRequest(t, phone, 'GET', '/commands');
  expect(commands.body.data.length).toBeGreaterThan(0);
  if (sms.length) {
    const res = await deviceRequest(t, phone, 'POST', '/sms/messages', {
      messages: sms.map((m, i) => ({ device_message_id: `e2e-pull-${n}-${i}`, sender: m.sender, body: m.body, received_at: new Date().toISOString() })),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  for (const c of commands.body.data) expect((await deviceRequest(t, phone, 'POST', `/commands/${c.id}/complete`, { resent_count: sms.length })).status).toBe(200);
}

describe('the checkout while the merchant phone is asked', () => {
  it('says it is checking, then shows "Payment received" by push when the phone re-sends the SMS', async () => {
    const { trxId } = await checkingPage('640.00');
    await phoneAnswers([{ sender: 'bKash', body: creditWithBalance('640.00', trxId, '1,640.00', PAYER) }]);
    await page.waitForSelector('main[data-status="completed"]', { timeout: 15_000 });
    expect(await page.innerText('.status-title')).toBe('Payment received');
    expect(errors).toEqual([]);
  });

  it('turns into the ordinary "Waiting for verification" when the phone answers without the SMS, with no error', async () => {
    await checkingPage('720.00');
    await phoneAnswers([]);
    await page.waitForSelector('main[data-status="awaiting_verification"][data-checking-phone="false"]', { timeout: 15_000 });
    expect(await page.innerText('.status-title')).toBe('Waiting for verification');
    expect(await page.locator('.page-error').isHidden()).toBe(true);
    expect(errors).toEqual([]);
  });
});
