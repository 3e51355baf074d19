import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, requestRefund, seedCompletedTransaction, seedGateway, seedTransaction } from '../support/seed.ts';
import { smsScene, type SmsScene } from '../support/sms-matching.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, shot, SHOTS, unexpectedErrors } from './console-support.ts';
import { collectPageErrors } from './support/browser.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * What a new operator found rough in the console, in a real Chromium against
 * the real server: the mode switch shows what waits in each mode and opens where
 * work waits; the payment search finds a payment nobody started paying; the
 * audit log and every table fit a 375 px phone; every time says its zone; a
 * manual refund is completed with the wallet reference and a note; a low
 * battery is said in words. Screens are checked with axe-core (any impact).
 */

let t: TestContext;
let browser: Browser;
let scene: SmsScene;
let owner: { email: string; password: string };

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off' });
  const res = await adminRequest(t, 'POST', '/operators', { email: 'owner@polish.test', name: 'Owner Person', role: 'owner' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  owner = { email: 'owner@polish.test', password: res.body.data.password };
  scene = await smsScene(t);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A fresh context (no stored mode) at a width, in Dhaka's time zone so the shown zone is known. */
async function open(width: 1280 | 375): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
  const ctx = await browser.newContext(
    width === 375
      ? { viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-US', timezoneId: 'Asia/Dhaka' }
      : { viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'Asia/Dhaka' },
  );
  const page = await ctx.newPage();
  const errors = collectPageErrors(page);
  return { page, errors, close: () => ctx.close() };
}

async function loggedIn(width: 1280 | 375, path: string) {
  const o = await open(width);
  await o.page.goto(`${t.baseUrl}/admin${path}`);
  await logIn(o.page, owner.email, owner.password);
  await o.page.getByTestId('operator').waitFor();
  return o;
}

async function settle(page: Page) {
  await page.waitForLoadState('networkidle');
  await page.getByRole('status').filter({ hasText: /^Loading/ }).waitFor({ state: 'detached' }).catch(() => undefined);
}

describe('console polish', () => {
  it('mode switch: shows what waits per mode and opens in test when only test has work; a chosen mode is kept', async () => {
    // Demo data: a test brand with a payment awaiting review; nothing waits in live.
    const { apiKey: testKey } = await t.createBrand('Demo Brand', { mode: 'test' });
    await seedTransaction(t, { apiKey: testKey, gateway: scene.gateway, status: 'awaiting_verification', amount: '410.00' });
    const { page, errors, close } = await loggedIn(1280, '/');
    const test = page.getByTestId('mode-test');
    await expect.poll(() => test.getAttribute('aria-pressed')).toBe('true');
    // The counts show once the overview of the new mode has loaded.
    await expect.poll(() => test.innerText()).toMatch(/TEST\s*1/);
    await expect.poll(() => page.getByTestId('mode-live').innerText()).toMatch(/LIVE\s*0/);
    await page.getByRole('button', { name: 'test 1 waiting for review' }).waitFor();
    await page.getByText('Test mode: showing test objects only').waitFor();
    await expectAccessible(page, 'overview with counts');
    await shot(page, 'polish-mode-counts');
    // The operator picks live: kept on reload although work waits in test.
    await page.getByTestId('mode-live').click();
    await page.reload();
    await page.getByTestId('operator').waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByTestId('mode-live').getAttribute('aria-pressed')).toBe('true');
    expect(unexpectedErrors(errors)).toEqual([]);
    await close();
  });

  it.each([1280, 375] as const)('payments search at %i px finds a payment with no transaction yet', async (width) => {
    const reference = `order-nopay-${width}`;
    const payment = await createPayment(t, scene.apiKey, { amount: '275.00', reference });
    const { page, errors, close } = await loggedIn(width, '/payments');
    await page.getByTestId('mode-live').click();
    await page.getByLabel('Reference').fill(reference);
    await page.getByRole('button', { name: 'Search' }).click();
    const table = page.getByRole('table', { name: 'Payments not paid yet' });
    await expect.poll(() => table.innerText()).toContain(payment.payment_id);
    expect(await table.innerText()).toContain('275.00 BDT');
    // By payment id too.
    await page.getByLabel('Reference').fill(payment.payment_id);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.url()).toContain(payment.payment_id);
    await expect.poll(() => table.innerText()).toContain(reference);
    await settle(page);
    await expectAccessible(page, `unpaid search at ${width}px`);
    await shot(page, 'polish-payments-unpaid');
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    expect(unexpectedErrors(errors)).toEqual([]);
    await close();
  });

  it('refunds: "Complete" asks for the wallet reference (required for a manual gateway) and a note; both are stored, shown and audited; every time shows its zone', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey: scene.apiKey, gateway: scene.gateway, amount: '640.00' });
    const refund = (await requestRefund(t, scene.apiKey, { trx_id: transaction.trxId, amount: '140.00', reason: 'wrong size' })).body.data as { id: number };
    const { page, errors, close } = await loggedIn(1280, '/refunds');
    await page.getByTestId('mode-live').click();
    const row = page.getByRole('table', { name: 'Refunds' }).getByRole('row').filter({ hasText: `#${refund.id}` });
    // Times carry their zone (the browser's: Dhaka, UTC+6).
    await expect.poll(() => row.innerText()).toMatch(/\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} GMT\+6/);
    await row.getByRole('button', { name: 'Complete…' }).click();
    const dialog = page.getByRole('dialog');
    const submit = dialog.getByRole('button', { name: 'Mark completed' });
    expect(await submit.isDisabled()).toBe(true);
    await dialog.getByLabel('Wallet reference (required)').fill('BK7RET0042');
    await dialog.getByLabel('Note (optional)').fill('Sent from the shop wallet');
    await expectAccessible(page, 'refund completion dialog');
    await shot(page, 'polish-refund-complete');
    await submit.click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `Refund #${refund.id}` }).innerText()).toContain('BK7RET0042');
    const [stored] = await t.sql<{ status: string; completion_reference: string; completion_note: string }>(
      'SELECT status, completion_reference, completion_note FROM refunds WHERE id = $1',
      [refund.id],
    );
    expect(stored).toEqual({ status: 'completed', completion_reference: 'BK7RET0042', completion_note: 'Sent from the shop wallet' });
    const [audit] = await t.sql<{ after: Record<string, unknown> }>("SELECT after FROM audit_log WHERE action = 'refund.complete' AND target_id = $1", [String(refund.id)]);
    expect(audit!.after).toMatchObject({ completion_reference: 'BK7RET0042', completion_note: 'Sent from the shop wallet' });
    await page.getByLabel('Status').selectOption('completed');
    const done = page.getByRole('table', { name: 'Refunds' }).getByRole('row').filter({ hasText: `#${refund.id}` });
    await expect.poll(() => done.innerText()).toContain('Sent back as BK7RET0042');
    expect(await done.innerText()).toContain('Note: Sent from the shop wallet');
    expect(unexpectedErrors(errors)).toEqual([]);
    await close();
  });

  it('devices: a low battery is flagged in words, at or below the setting and not charging', async () => {
    const low = await pairDevice(t, { brandId: scene.brandId, name: 'Low phone' });
    const charging = await pairDevice(t, { brandId: scene.brandId, name: 'Charging phone' });
    expect((await deviceRequest(t, low, 'POST', '/devices/heartbeats', { battery_level: 9, is_charging: false, network: 'wifi' })).status).toBe(200);
    expect((await deviceRequest(t, charging, 'POST', '/devices/heartbeats', { battery_level: 9, is_charging: true, network: 'wifi' })).status).toBe(200);
    for (const width of [1280, 375] as const) {
      const { page, errors, close } = await loggedIn(width, '/devices');
      await page.getByTestId('mode-live').click();
      const table = page.getByRole('table', { name: 'Devices' });
      const lowRow = table.getByRole('row').filter({ hasText: 'Low phone' });
      await expect.poll(() => lowRow.innerText()).toContain('Low battery');
      const chargingRow = table.getByRole('row').filter({ hasText: 'Charging phone' });
      expect(await chargingRow.innerText()).toContain('charging');
      expect(await chargingRow.innerText()).not.toContain('Low battery');
      await settle(page);
      await expectAccessible(page, `devices with low battery at ${width}px`);
      await shot(page, 'polish-devices-battery');
      expect(unexpectedErrors(errors)).toEqual([]);
      await close();
    }
    // The overview lists the same phones with the same flag.
    const { page, close } = await loggedIn(1280, '/');
    await page.getByTestId('mode-live').click();
    const item = page.getByRole('listitem').filter({ hasText: 'Low phone' });
    await expect.poll(() => item.innerText()).toContain('Low battery');
    expect(await page.getByRole('listitem').filter({ hasText: 'Charging phone' }).innerText()).not.toContain('Low battery');
    await close();
  });

  it('audit log at 375 px: one compact card per entry with its change folded; at 1280 px the table', async () => {
    // Sixteen and more entries: the sixteen settings changes below, plus what earlier tests recorded.
    for (let i = 0; i < 16; i++) expect((await adminRequest(t, 'PATCH', '/settings', { match_window_minutes: 1440 + i })).status).toBe(200);
    {
      const { page, errors, close } = await loggedIn(375, '/audit');
      const entries = page.getByRole('list', { name: 'Audit log entries' }).getByRole('listitem');
      await expect.poll(() => entries.count()).toBeGreaterThanOrEqual(16);
      await settle(page);
      const n = await entries.count();
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      // About 100 px per entry including its folded change, not several hundred.
      expect(height / n, `${height}px for ${n} entries`).toBeLessThan(120);
      const first = entries.first();
      expect(await first.locator('details').getAttribute('open')).toBeNull();
      expect(await first.innerText()).toMatch(/GMT\+6/);
      await first.getByText('Change').click();
      await expect.poll(() => first.innerText()).toContain('after');
      await expectAccessible(page, 'audit at 375px');
      await shot(page, 'polish-audit');
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      expect(unexpectedErrors(errors)).toEqual([]);
      await close();
    }
    {
      const { page, close } = await loggedIn(1280, '/audit');
      await page.getByRole('table', { name: 'Audit log' }).waitFor();
      expect(await page.getByRole('list', { name: 'Audit log entries' }).isVisible()).toBe(false);
      await close();
    }
  });

  it.each([1280, 375] as const)("brands at %i px: an owner switches a brand's receipt e-mails on and off; a viewer only sees the state", async (width) => {
    const { brandId } = await t.createBrand(`Receipts ${width}`);
    const { page, errors, close } = await loggedIn(width, '/brands');
    const button = page.getByRole('button', { name: `Receipt e-mails for Receipts ${width}: off, turn on` });
    await button.click();
    await page.getByText(`Receipts ${width}'s customers get receipt e-mails from now on.`).waitFor();
    expect((await adminRequest(t, 'GET', `/brands/${brandId}`)).body.data.receipts_enabled).toBe(true);
    await page.getByRole('button', { name: `Receipt e-mails for Receipts ${width}: on, turn off` }).click();
    await page.getByText(`Receipts ${width} sends no more receipts.`).waitFor();
    expect((await adminRequest(t, 'GET', `/brands/${brandId}`)).body.data.receipts_enabled).toBe(false);
    await settle(page);
    await expectAccessible(page, `brands with the receipts switch at ${width}px`);
    expect(unexpectedErrors(errors)).toEqual([]);
    await close();
    if (width === 1280) {
      const viewer = await adminRequest(t, 'POST', '/operators', { email: 'viewer@polish.test', name: 'Viewer Person', role: 'viewer' });
      const v = await open(1280);
      await v.page.goto(`${t.baseUrl}/admin/brands`);
      await logIn(v.page, 'viewer@polish.test', viewer.body.data.password);
      await v.page.getByRole('table', { name: 'Brands' }).waitFor();
      expect(await v.page.getByRole('button', { name: /Receipt e-mails for/ }).count()).toBe(0);
      await v.close();
    }
  });

  it.each([1280, 375] as const)('phones at %i px: a phone without the SMS permission is flagged on the devices screen and the overview, with what to do', async (width) => {
    const phone = await pairDevice(t, { brandId: scene.brandId, name: `No-permission phone ${width}` });
    const risky = await pairDevice(t, { brandId: scene.brandId, name: `Optimised phone ${width}` });
    expect((await deviceRequest(t, phone, 'POST', '/devices/heartbeats', { sms_permission: false, battery_optimization_ignored: true })).status).toBe(200);
    expect((await deviceRequest(t, risky, 'POST', '/devices/heartbeats', { sms_permission: true, battery_optimization_ignored: false, last_sms_seen_at: new Date().toISOString() })).status).toBe(200);
    const { page, errors, close } = await loggedIn(width, '/devices');
    await page.getByTestId('mode-live').click();
    const cannot = page.getByRole('note', { name: `No-permission phone ${width}: cannot receive SMS` });
    await expect.poll(() => cannot.innerText()).toContain('The app has no SMS permission');
    await expect.poll(() => page.getByRole('note', { name: `Optimised phone ${width}: forwarding at risk` }).innerText()).toContain('Battery optimisation is on');
    await settle(page);
    await expectAccessible(page, `devices with phone health at ${width}px`);
    await page.goto(`${t.baseUrl}/admin/`);
    await expect.poll(() => page.getByRole('note', { name: `No-permission phone ${width}: cannot receive SMS` }).count()).toBe(1);
    await settle(page);
    await expectAccessible(page, `overview with phone health at ${width}px`);
    await shot(page, `polish-phone-health-${width}`);
    expect(unexpectedErrors(errors)).toEqual([]);
    await close();
  });

  it('API keys: an owner creates a key limited to reading with an expiry day; a day already past is refused under the field', async () => {
    const { brandId } = await t.createBrand('Keys Shop');
    const { page, errors, close } = await loggedIn(1280, '/brands');
    await page.getByRole('button', { name: 'Keys Shop', exact: true }).click();
    await page.getByRole('button', { name: 'New API key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('What the key is for').fill('reporting');
    await dialog.getByRole('checkbox', { name: /^read:/ }).check();
    await dialog.getByLabel('Expires on (optional)').fill('2020-01-01');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => dialog.innerText()).toContain('Must be in the future');
    // Only the key the test brand was made with.
    expect((await adminRequest(t, 'GET', `/brands/${brandId}/api-keys`)).body.data).toHaveLength(1);
    const next = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await dialog.getByLabel('Expires on (optional)').fill(next);
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-api-key').waitFor();
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    const keys = (await adminRequest(t, 'GET', `/brands/${brandId}/api-keys`)).body.data.filter((k: { name: string }) => k.name === 'reporting');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ name: 'reporting', scopes: ['read'] });
    // The end of that day in the operator's zone: between 29 and 31 days from now.
    const days = (Date.parse(keys[0].expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29);
    expect(days).toBeLessThan(31);
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: 'reporting' });
    await expect.poll(() => row.innerText()).toMatch(/read[\s\S]*expires[\s\S]*never/);
    await settle(page);
    await expectAccessible(page, 'brands with a scoped key');
    expect(unexpectedErrors(errors)).toEqual([]);
    await close();
  });

  it('every table at 375 px stays inside the screen and scrolls sideways in its own box; nothing is cut off', { timeout: 180_000 }, async () => {
    await seedGateway(t, 'nagad');
    const { page, errors, close } = await loggedIn(375, '/');
    await page.getByTestId('mode-live').click();
    const report: string[] = [];
    for (const path of ['/payments', '/devices', '/webhooks', '/refunds', '/customers', '/sms', '/gateways', '/wallet-accounts', '/reconciliation', '/brands', '/operators', '/audit', '/account']) {
      await page.goto(`${t.baseUrl}/admin${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await settle(page);
      const problems = await page.evaluate(() => {
        const out: string[] = [];
        const vw = document.documentElement.clientWidth;
        for (const table of Array.from(document.querySelectorAll('table'))) {
          if (table.getClientRects().length === 0) continue;
          const box = table.parentElement!;
          const r = box.getBoundingClientRect();
          if (r.left < -0.5 || r.right > vw + 0.5) out.push(`${table.getAttribute('aria-label')}: its box spans ${Math.round(r.left)}..${Math.round(r.right)} of ${vw}`);
          const style = getComputedStyle(box);
          if (box.scrollWidth > box.clientWidth + 1) {
            if (!['auto', 'scroll'].includes(style.overflowX)) out.push(`${table.getAttribute('aria-label')}: wider than its box, which does not scroll`);
            // A column cut at the screen's edge must not look like the table's end.
            if (!box.nextElementSibling?.matches('[data-testid="table-scroll-hint"]')) out.push(`${table.getAttribute('aria-label')}: cut off without saying it scrolls`);
          }
        }
        if (document.documentElement.scrollWidth > vw) out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${vw})`);
        return out;
      });
      report.push(...problems.map((p) => `${path}: ${p}`));
      await shot(page, `polish-tables${path.replace(/\//g, '-')}`);
    }
    expect(report, `see ${SHOTS}`).toEqual([]);
    expect(unexpectedErrors(errors)).toEqual([]);
    await close();
  });
});
