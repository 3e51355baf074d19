import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectOfflineDevices } from '../../server/domain/devices/presence.ts';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedTransaction } from '../support/seed.ts';
import { smsScene, type SmsScene } from '../support/sms-matching.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * Console flows against the real server and database in a real Chromium: the
 * payment search by customer e-mail/phone and by any reference, a device's
 * presence history, the overview's wording, a TOTP login (enrolled in the
 * console, codes computed with the same `otpauth` library the server uses) and
 * a locked account. Screens are screenshotted at 1280 and 375 px under
 * test-results/console/ and checked with axe-core.
 */

let t: TestContext;
let browser: Browser;
let scene: SmsScene;

async function newOperator(role: 'owner' | 'operator' | 'viewer', email: string): Promise<{ email: string; password: string }> {
  const res = await adminRequest(t, 'POST', '/operators', { email, name: `${role} ${email.split('@')[0]}`, role });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { email, password: res.body.data.password };
}

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off' });
  scene = await smsScene(t);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Waits until the screen's lists have loaded. */
async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.getByRole('status').filter({ hasText: /^Loading/ }).waitFor({ state: 'detached' }).catch(() => undefined);
}

/** The same screen at phone width: screenshot, axe, and nothing wider than the screen but the tables. */
async function atPhoneWidth(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 375, height: 812 });
  await settled(page);
  await expectAccessible(page, `${name} at 375px`);
  await shot(page, name);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} at 375px scrolls sideways`).toBeLessThanOrEqual(0);
}

describe('console flows', () => {
  it('payments: search by customer e-mail (any case), by phone (national form), by payment id; a bad e-mail is refused with its field', async () => {
    const jane = await seedTransaction(t, { apiKey: scene.apiKey, gateway: scene.gateway, status: 'completed', amount: '1250.00', customer: { name: 'Jane', email: 'jane.search@example.com', phone: '+8801712000111' } });
    await seedTransaction(t, { apiKey: scene.apiKey, gateway: scene.gateway, status: 'completed', amount: '80.00', customer: { email: 'someone.else@example.com' } });
    const viewer = await newOperator('viewer', 'search.viewer@console.test');
    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, 1280);
    await page.goto(`${t.baseUrl}/admin/payments`);
    await logIn(page, viewer.email, viewer.password);
    const table = page.getByRole('table', { name: 'Payments' });
    await table.waitFor();

    await page.getByLabel('Customer').fill('  Jane.Search@EXAMPLE.com ');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    expect(await table.innerText()).toContain(jane.transaction.trxId);
    expect(await table.innerText()).toContain('1250.00 BDT');
    // One match: "1 payment", not "1 payments".
    await page.getByRole('heading', { name: '1 payment', exact: true }).waitFor();
    expect(page.url()).toContain('customer=');
    await settled(page);
    await expectAccessible(page, 'payments search');
    await shot(page, 'payments-search');
    await atPhoneWidth(page, 'payments-search');
    await page.setViewportSize({ width: 1280, height: 900 });

    // The phone as a person types it (national form with separators).
    await page.getByLabel('Customer').fill('01712-000111');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.url()).toContain('customer=01712-000111');
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    expect(await table.innerText()).toContain(jane.transaction.trxId);

    // Any reference: the payment id finds it too.
    await page.getByLabel('Customer').fill('');
    await page.getByLabel('Reference').fill(jane.paymentId);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.url()).toContain(`reference=${jane.paymentId}`);
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    expect(await table.innerText()).toContain(jane.transaction.trxId);

    // An address that cannot be valid: the server's 400 names the field.
    await page.getByLabel('Reference').fill('');
    await page.getByLabel('Customer').fill('not-an-address@');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('customer_email');
    expect(await page.getByRole('alert').innerText()).toContain('Must be a valid email address');
    await shot(page, 'payments-search-invalid');
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });

  it("devices: a device's presence history shows when it went offline and came back, with battery and signal", async () => {
    const device = await pairDevice(t, { brandId: scene.brandId, name: 'Shop counter phone' });
    await deviceRequest(t, device, 'POST', '/devices/heartbeats', { battery_level: 23, is_charging: false, network: 'cellular' });
    await t.sql("UPDATE devices SET last_seen_at = now() - interval '3 hours', paired_at = now() - interval '4 hours' WHERE id = $1", [device.deviceId]);
    await detectOfflineDevices(t.runtime.deps.db);
    await deviceRequest(t, device, 'POST', '/devices/heartbeats', { battery_level: 88, is_charging: true, network: 'wifi' });
    await detectOfflineDevices(t.runtime.deps.db);

    const viewer = await newOperator('viewer', 'devices.viewer@console.test');
    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, 1280);
    await page.goto(`${t.baseUrl}/admin/devices`);
    await logIn(page, viewer.email, viewer.password);
    await page.getByRole('table', { name: 'Devices' }).waitFor();
    await page.getByRole('button', { name: 'Presence history of Shop counter phone' }).click();
    const panel = page.getByRole('region', { name: 'Presence history of Shop counter phone' });
    const history = panel.getByRole('table', { name: 'Presence history' });
    await expect.poll(() => history.getByRole('row').count()).toBe(3);
    const rows = await history.getByRole('row').allInnerTexts();
    // Newest first: back online on wifi while charging, offline before on cellular.
    expect(rows[1]).toMatch(/online[\s\S]*88%[\s\S]*wifi/);
    expect(rows[2]).toMatch(/offline[\s\S]*23%[\s\S]*cellular/);
    // Focus moves to the panel, so a keyboard or screen reader user lands on it.
    expect(await page.evaluate(() => [document.activeElement?.getAttribute('role'), document.activeElement?.getAttribute('aria-label')])).toEqual(['region', 'Presence history of Shop counter phone']);
    await settled(page);
    await expectAccessible(page, 'presence history');
    await shot(page, 'devices-presence-history');
    await atPhoneWidth(page, 'devices-presence-history');
    await panel.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => panel.count()).toBe(0);
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });

  it('overview: one waiting payment is "1 payment"; its phones are labelled with their mode', async () => {
    const { brandId, apiKey } = await t.createBrand('Overview Wording Brand');
    await seedTransaction(t, { apiKey, gateway: scene.gateway, status: 'awaiting_verification', amount: '300.00' });
    await pairDevice(t, { brandId, name: 'Live till', mode: 'live' });
    await pairDevice(t, { brandId, name: 'Test till', mode: 'test' });
    const owner = await newOperator('owner', 'overview.owner@console.test');
    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, 1280);
    await page.goto(`${t.baseUrl}/admin`);
    await logIn(page, owner.email, owner.password);
    const card = page.locator('section').filter({ has: page.getByRole('heading', { name: 'Overview Wording Brand' }) });
    await expect.poll(() => card.innerText()).toContain('1 payment · 0 SMS');
    expect(await card.innerText()).not.toContain('1 payments');
    await expect.poll(() => card.innerText()).toContain('Live till');
    const text = await card.innerText();
    expect(text).toContain('Live phones: 1 online');
    // Only this mode's phones, each with its mode.
    expect(text).not.toContain('Test till');
    expect(await card.getByRole('listitem').filter({ hasText: 'Live till' }).innerText()).toContain('live');
    await settled(page);
    await expectAccessible(page, 'overview');
    await shot(page, 'overview-wording');
    // The test mode shows the test phone, labelled so.
    await page.getByRole('button', { name: 'test' }).click();
    await expect.poll(() => card.innerText()).toContain('Test till');
    expect(await card.innerText()).toContain('Test phones: 1 online');
    expect(await card.innerText()).not.toContain('Live till');
    await atPhoneWidth(page, 'overview-wording-test');
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });

  it('TOTP: turned on in the console, the next login asks for the code; a wrong code is refused, the right one logs in', async () => {
    const op = await newOperator('operator', 'totp.person@console.test');
    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, 1280);
    await page.goto(`${t.baseUrl}/admin/account`);
    await logIn(page, op.email, op.password);
    await page.getByRole('button', { name: 'Set up TOTP' }).click();
    const secret = (await page.getByTestId('totp-secret').innerText()).trim();
    const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
    await page.getByLabel('Code', { exact: true }).fill(totp.generate());
    await page.getByRole('button', { name: 'Turn TOTP on' }).click();
    await page.getByText('TOTP is on: the next login asks for a code.').waitFor();
    const [row] = await t.sql<{ totp_secret: string | null }>('SELECT totp_secret FROM operators WHERE email = $1', [op.email]);
    expect(row!.totp_secret).not.toBeNull();
    expect(row!.totp_secret).not.toContain(secret);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByText('You have logged out.').waitFor();

    await logIn(page, op.email, op.password);
    await expect.poll(() => page.getByRole('alert').innerText()).toBe('Enter the 6-digit code from your authenticator app.');
    const codeBox = page.getByLabel('Authenticator code');
    await expectAccessible(page, 'login with TOTP');
    await shot(page, 'login-totp');
    // A code of ten minutes ago: outside the one-step window either side.
    const now = Date.now();
    const valid = new Set([-1, 0, 1, 2].map((s) => totp.generate({ timestamp: now + s * 30_000 })));
    let wrong = totp.generate({ timestamp: now - 600_000 });
    if (valid.has(wrong)) wrong = String((Number(wrong) + 1) % 1_000_000).padStart(6, '0');
    await codeBox.fill(wrong);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toBe('Wrong e-mail, password or code.');
    await shot(page, 'login-totp-wrong');
    expect(await page.getByTestId('operator').count()).toBe(0);
    // The next step's code (the enrolment used this step's; each step is accepted once).
    await codeBox.fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('operator').waitFor();
    expect(await page.getByTestId('operator').innerText()).toContain('operator');
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });

  it('a locked account: after five wrong passwords even the right one is refused with the lock-out message', async () => {
    const op = await newOperator('operator', 'locked.person@console.test');
    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, 375);
    await page.goto(`${t.baseUrl}/admin`);
    for (let i = 1; i <= 5; i++) {
      const answered = page.waitForResponse((r) => r.url().endsWith('/api/admin/v1/session') && r.request().method() === 'POST');
      await logIn(page, op.email, `wrong-password-${i}`);
      expect((await answered).status()).toBe(401);
      await expect.poll(() => page.getByRole('alert').innerText()).toBe('Wrong e-mail, password or code.');
    }
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/admin/v1/session') && r.request().method() === 'POST');
    await logIn(page, op.email, op.password);
    const res = await answered;
    expect(res.status()).toBe(429);
    expect(Number(res.headers()['retry-after'])).toBeGreaterThan(800);
    expect((await res.json()).errors[0].code).toBe('ACCOUNT_LOCKED');
    await expect.poll(() => page.getByRole('alert').innerText()).toBe('This account is locked after too many failed attempts. Try again in 15 minutes.');
    expect(await page.getByTestId('operator').count()).toBe(0);
    await expectAccessible(page, 'login locked');
    await shot(page, 'login-locked');
    const [row] = await t.sql<{ locked: boolean }>('SELECT locked_until > now() AS locked FROM operators WHERE email = $1', [op.email]);
    expect(row!.locked).toBe(true);
    expect(await t.sql('SELECT id FROM operator_sessions s WHERE s.operator_id = (SELECT id FROM operators WHERE email = $1)', [op.email])).toEqual([]);
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });
});
