import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { axeViolationLines } from './support/axe.ts';
import { collectPageErrors, launchChromium } from './support/browser.ts';

/**
 * The API reference in a real Chromium, under the page's own CSP: it renders the
 * merchant operations first, with code samples and search, loads nothing from
 * outside this origin (it must work offline), and logs no console error (a CSP
 * violation is one).
 */

const RESULTS = path.resolve('test-results');
let t: TestContext;
let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let errors: string[];
const foreign: string[] = [];

beforeAll(async () => {
  mkdirSync(RESULTS, { recursive: true });
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  browser = await launchChromium();
  ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await ctx.newPage();
  errors = collectPageErrors(page);
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(t.baseUrl) && !r.url().startsWith('data:')) foreign.push(r.url());
  });
});
afterAll(async () => {
  await ctx?.close();
  await browser?.close();
  await t?.close();
});

describe('/docs in Chromium', () => {
  it('renders the merchant API first, with its operations and code samples, offline and without CSP errors', async () => {
    const res = await page.goto(`${t.baseUrl}/docs#tag/payments/POST/api/v1/payments`, { waitUntil: 'networkidle' });
    expect(res?.status()).toBe(200);
    await page.getByText('Create a payment').first().waitFor({ timeout: 30_000 }).catch(async (e: unknown) => {
      await page.screenshot({ path: path.join(RESULTS, 'docs-failure.png') });
      throw new Error(`${String(e)}\n${(await page.locator('body').innerText()).slice(0, 2000)}\n${errors.join('\n')}`);
    });
    const text = await page.locator('body').innerText();
    const merchant = text.indexOf('Merchant API');
    const admin = text.indexOf('Admin: Brands');
    expect(merchant).toBeGreaterThanOrEqual(0);
    expect(admin).toBeGreaterThan(merchant);
    expect(text.indexOf('Payments')).toBeLessThan(admin);
    // The create-payment request sample shows the example body, sent to this very address.
    await expect.poll(async () => (await page.locator('body').innerText()).includes('ORDER-1001'), { timeout: 15_000 }).toBe(true);
    expect(await page.locator('body').innerText()).toContain(`${t.baseUrl}/api/v1/payments`);
    await page.screenshot({ path: path.join(RESULTS, 'docs-reference.png') });
    // The operation's own samples (x-codeSamples) are offered beside the generated clients.
    await page.locator('button', { hasText: 'Shell Curl' }).nth(1).click();
    await page.keyboard.type('SDK');
    await page.getByText('Node SDK').first().waitFor({ timeout: 10_000 });
    await page.keyboard.press('Escape');
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  });

  // The renderer draws only what is near the anchor: each view is checked as a
  // reader arriving there sees it (a fresh load, not a hash change).
  const views: Array<[string, 'light' | 'dark']> = [
    ['tag/payments/POST/api/v1/payments', 'light'],
    ['tag/payments/POST/api/v1/payments', 'dark'],
    ['description/introduction', 'light'],
    ['tag/webhooks', 'dark'],
    ['tag/checkout', 'light'],
    ['tag/admin-gateways', 'dark'],
    ['model/payment', 'light'],
  ];
  it.each(views)('has no accessibility violation of any impact at #%s in the %s theme', async (anchor, colorScheme) => {
    // The reader's colour scheme picks the theme.
    await page.emulateMedia({ colorScheme });
    await page.goto('about:blank');
    await page.goto(`${t.baseUrl}/docs#${anchor}`, { waitUntil: 'networkidle' });
    await page.getByText('Merchant API').first().waitFor({ timeout: 30_000 });
    if (anchor.includes('POST/api/v1/payments')) {
      await expect.poll(async () => (await page.locator('body').innerText()).includes('ORDER-1001'), { timeout: 15_000 }).toBe(true);
    }
    expect(await page.locator(`.${colorScheme}-mode`).count()).toBeGreaterThan(0);
    expect(await axeViolationLines(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('has no accessibility violation of any impact while a reader scrolls through the operations', async () => {
    // Scrolling draws several operations at once: their example-response regions must still have distinct names.
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto('about:blank');
    await page.goto(`${t.baseUrl}/docs#tag/payments/POST/api/v1/payments`, { waitUntil: 'networkidle' });
    await page.getByText('Merchant API').first().waitFor({ timeout: 30_000 });
    const seen = new Set<string>();
    // Far enough to draw the checkout's operations, two of which answer the same statuses.
    for (let step = 0; step < 16; step++) {
      await page.mouse.wheel(0, 900);
      await page.waitForTimeout(300);
      for (const line of await axeViolationLines(page)) seen.add(line);
    }
    expect([...seen]).toEqual([]);
    // axe sees only what is drawn: the names of every example-response region drawn are compared too.
    const names = await page.evaluate(() =>
      Array.from(document.querySelectorAll('[role="region"]')).map((r) => {
        const by = r.getAttribute('aria-labelledby');
        return by ? by.split(/\s+/).map((id: string) => document.getElementById(id)?.textContent?.trim() ?? '').join(' ') : (r.getAttribute('aria-label') ?? '');
      }),
    );
    expect(names.length).toBeGreaterThan(1);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('has search', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.keyboard.press('Control+k');
    const search = page.getByRole('combobox').or(page.getByPlaceholder(/search/i)).first();
    await search.waitFor({ timeout: 10_000 });
    await search.fill('refund');
    await expect.poll(async () => (await page.locator('body').innerText()).toLowerCase().includes('refund'), { timeout: 10_000 }).toBe(true);
    await page.screenshot({ path: path.join(RESULTS, 'docs-search.png') });
    expect(errors).toEqual([]);
  });
});
