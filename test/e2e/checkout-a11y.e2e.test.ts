import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { ensureSandboxGateway } from '../../server/domain/sandbox/gateway.ts';
import { axeViolationLines } from './support/axe.ts';
import { launchChromium, phoneContext } from './support/browser.ts';
import { startPublicTestServer } from './support/public-proxy.ts';

/**
 * Every page a customer sees (the checkout in each of its states, the payment
 * link page, the sandbox gateway's page), at 375 px and at 1280 px, has no axe
 * violation of any impact: what customers read must be readable by all of them.
 */

let t: TestContext;
let publicUrl: string;
let browser: Browser;
let ctx: BrowserContext | undefined;
let apiKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;

beforeAll(async () => {
  ({ t, publicUrl } = await startPublicTestServer({ WORKERS_ENABLED: 'true' }));
  ({ apiKey } = await t.createBrand('Dhaka Books', { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash', { sort_order: 1, fee_payer: 'customer' });
  sandbox = await ensureSandboxGateway(t.runtime.deps.db);
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

async function open(width: 375 | 1280): Promise<{ page: Page }> {
  ctx = width === 375 ? await phoneContext(browser) : await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await ctx.newPage();
  return { page };
}

async function createPayment(): Promise<string> {
  const res = await t.request('POST', '/api/v1/payments', {
    token: apiKey,
    body: { amount: '1250.00', currency: 'BDT', reference: 'ORDER-A11Y', cancel_url: 'https://shop.example/cart' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.payment_id as string;
}

async function expectNoViolations(page: Page, what: string): Promise<void> {
  expect(await axeViolationLines(page), what).toEqual([]);
}

describe.each([375, 1280] as const)('at %i px', (width) => {
  it('the checkout: gateways, a gateway opened, a refused id, waiting, completed, expired', async () => {
    const { page } = await open(width);
    const id = await createPayment();
    await page.goto(`${publicUrl}/checkout/${id}`);
    await expectNoViolations(page, 'gateway choice');
    const panel = `details[data-gateway="${bkash.code}"]`;
    await page.click(`${panel} summary`);
    await expectNoViolations(page, 'manual gateway opened');
    await page.click(`${panel} button[type=submit]`);
    await page.waitForSelector(`${panel} .form-error:not([hidden])`);
    await expectNoViolations(page, 'form error shown');
    await page.fill(`${panel} input[name=gateway_trx_id]`, `A11Y${width}X0001`);
    await page.click(`${panel} button[type=submit]`);
    await page.waitForSelector('main[data-status="awaiting_verification"]');
    await expectNoViolations(page, 'awaiting verification');

    await t.sql(`UPDATE transactions SET status = 'completed', completed_at = now(), completion_source = 'admin' WHERE intent_id = (SELECT id FROM payment_intents WHERE uuid = $1)`, [id]);
    await t.sql(`UPDATE payment_intents SET status = 'completed', completed_at = now() WHERE uuid = $1`, [id]);
    await page.goto(`${publicUrl}/checkout/${id}`);
    await page.waitForSelector('main[data-status="completed"]');
    await expectNoViolations(page, 'completed');

    const expired = await createPayment();
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [expired]);
    await page.goto(`${publicUrl}/checkout/${expired}`);
    await page.waitForSelector('main[data-status="expired"]');
    await expectNoViolations(page, 'expired');
  });

  it('the sandbox gateway page, and the checkout after a decline', async () => {
    const { page } = await open(width);
    const id = await createPayment();
    await page.goto(`${publicUrl}/checkout/${id}`);
    await page.click(`details[data-gateway="${sandbox.code}"] summary`);
    await page.click(`details[data-gateway="${sandbox.code}"] button[type=submit]`);
    await page.waitForURL(/\/sandbox\/pay\//);
    await expectNoViolations(page, 'sandbox page');
    await page.click('#decline');
    await page.waitForSelector('main[data-status="failed"]', { timeout: 20_000 });
    await expectNoViolations(page, 'declined');
  });

  it('the payment link page, with a refused amount', async () => {
    const { page } = await open(width);
    const res = await t.request('POST', '/api/v1/payment-links', {
      token: apiKey,
      body: { currency: 'BDT', min_amount: '100.00', max_amount: '5000.00', description: 'Donation to the book fair' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await page.goto(`${publicUrl}/pay/${res.body.data.id}`);
    await expectNoViolations(page, 'link page');
    await page.fill('input[name=amount]', '50');
    await page.click('button[type=submit]');
    await page.waitForSelector('.form-error');
    await expectNoViolations(page, 'link page, refused amount');
  });
});
