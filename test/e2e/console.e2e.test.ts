import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsScene, type SmsScene } from '../support/sms-matching.ts';
import { emitPaymentCompleted } from '../support/webhook-worker.ts';
import { collectPageErrors, launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, shot } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * The operator console in a real Chromium, under its real CSP, against the real
 * server and database: log in (wrong password first), decide the review queue
 * (an ambiguous payment verified in at most 3 clicks, one rejected), pair a
 * phone, replay a dead letter, a real viewer refused by the server, log out. Every
 * screen is screenshotted at 1280 and 375 px (test-results/console/) and checked
 * with axe-core; no console error (a CSP violation is one) is allowed.
 */

let t: TestContext;
let browser: Browser;
let scene: SmsScene;
const accounts: Record<'owner' | 'operator' | 'viewer', { email: string; password: string }> = {} as never;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  for (const role of ['owner', 'operator', 'viewer'] as const) {
    const email = `${role}@console.test`;
    const res = await adminRequest(t, 'POST', '/operators', { email, name: `${role[0]!.toUpperCase()}${role.slice(1)} Person`, role });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    accounts[role] = { email, password: res.body.data.password };
  }
  scene = await smsScene(t);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function open(width: 1280 | 375): Promise<{ ctx: BrowserContext; page: Page; errors: string[] }> {
  const ctx = await browser.newContext(
    width === 375 ? { viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-US' } : { viewport: { width: 1280, height: 900 }, locale: 'en-US' },
  );
  const page = await ctx.newPage();
  const errors = collectPageErrors(page);
  page.on('request', (r) => {
    if (!r.url().startsWith(t.baseUrl) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) errors.push(`foreign request ${r.url()}`);
  });
  return { ctx, page, errors };
}

/** Console errors other than the refusals a test provokes on purpose (they log as failed loads). */
const unexpected = (errors: string[]) => errors.filter((e) => !/status of (401|403)/.test(e));

describe('console', () => {
  it('login: wrong password is refused with a clear message; the right one shows operator, role and mode', async () => {
    const { ctx, page, errors } = await open(1280);
    const res = await page.goto(`${t.baseUrl}/admin`);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByRole('heading', { name: 'Paycollect console' }).waitFor();
    await expectAccessible(page, 'login');
    await shot(page, 'login');
    await logIn(page, accounts.operator.email, 'not-the-password-1');
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('Wrong e-mail, password or code.');
    await shot(page, 'login-wrong-password');
    await page.getByLabel('Password').fill(accounts.operator.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    const header = page.getByTestId('operator');
    await header.waitFor();
    expect(await header.innerText()).toContain('Operator Person');
    expect(await header.innerText()).toContain('operator');
    expect(await page.getByRole('button', { name: 'live' }).getAttribute('aria-pressed')).toBe('true');
    expect(unexpected(errors)).toEqual([]);
    await ctx.close();
  });

  it('review: an ambiguous payment is verified with its SMS in at most 3 clicks, another is rejected; both leave the queue', async () => {
    // Two open payments of the same amount and one SMS that could prove either: low_confidence, left for a person.
    const first = await seedPayment(t, scene, { amount: '450.00' });
    const second = await seedPayment(t, scene, { amount: '450.00' });
    const trxId = newGatewayTrxId();
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('450.00', trxId) }]);
    expect(sms!.match_status).toBe('low_confidence');
    // A payment whose customer gave an id no SMS confirms.
    const claimed = await seedPayment(t, scene, { amount: '980.00', status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });

    const { ctx, page, errors } = await open(1280);
    await page.goto(`${t.baseUrl}/admin/review`);
    await logIn(page, accounts.operator.email, accounts.operator.password);
    const queue = page.getByRole('list', { name: 'Items to review' });
    await queue.waitFor();

    // Click 1: the SMS in the queue. Its text, parsed fields and the candidates show beside it.
    let clicks = 0;
    await queue.getByRole('button', { name: /450\.00 SMS/ }).click();
    clicks++;
    await expect.poll(() => page.getByTestId('sms-body').innerText()).toContain(trxId);
    const candidates = page.getByRole('group', { name: 'Which payment does this SMS prove?' });
    await expect.poll(() => candidates.getByRole('radio').count()).toBe(2);
    expect(await page.getByText('low confidence').first().isVisible()).toBe(true);
    await expectAccessible(page, 'review');
    await shot(page, 'review');
    // Click 2: the first candidate is preselected; verify it with this SMS.
    await page.getByRole('button', { name: new RegExp(`^Verify with SMS #${sms!.id}`) }).click();
    clicks++;
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Verified' }).count()).toBe(1);
    expect(clicks).toBeLessThanOrEqual(3);
    const [verified] = await t.sql<{ id: string; status: string }>(`SELECT id, status FROM transactions WHERE id = ANY($1) AND status = 'completed'`, [[first.transaction.id, second.transaction.id]]);
    expect(verified).toBeDefined();
    const [smsRow] = await t.sql<{ match_status: string; transaction_id: string }>('SELECT match_status, transaction_id FROM sms_records WHERE id = $1', [sms!.id]);
    expect(smsRow).toEqual({ match_status: 'matched', transaction_id: verified!.id });
    await expect.poll(() => queue.getByRole('button', { name: /450\.00 SMS/ }).count()).toBe(0);

    // Reject the claimed payment with a reason, from the keyboard: j/k select, r opens the dialog.
    await queue.getByRole('button', { name: /980\.00 BDT/ }).click();
    await page.keyboard.press('r');
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Reason').fill('No such payment in the wallet statement');
    await dialog.getByRole('button', { name: 'Reject payment' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Rejected' }).count()).toBe(1);
    const [rejected] = await t.sql<{ status: string; failure_reason: string }>('SELECT status, failure_reason FROM transactions WHERE id = $1', [claimed.transaction.id]);
    expect(rejected).toEqual({ status: 'failed', failure_reason: 'No such payment in the wallet statement' });
    await expect.poll(() => queue.getByRole('button', { name: /980\.00 BDT/ }).count(), { timeout: 10_000 }).toBe(0);

    // An SMS no payment could match (a personal transfer): dismissed with a reason, it leaves the queue.
    const [stray] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('333.00', newGatewayTrxId()) }]);
    expect(stray!.match_status).toBe('no_candidate');
    await queue.getByRole('button', { name: /333\.00 SMS/ }).click({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Dismiss SMS…' }).click();
    await page.getByRole('dialog').getByLabel('Reason').fill('Personal transfer to the shop owner');
    await page.getByRole('dialog').getByRole('button', { name: 'Dismiss SMS' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `Dismissed SMS #${stray!.id}` }).count()).toBe(1);
    const [dismissed] = await t.sql<{ resolution: string }>('SELECT resolution FROM sms_records WHERE id = $1', [stray!.id]);
    expect(dismissed!.resolution).toBe('dismissed');
    await expect.poll(() => queue.getByRole('button', { name: /333\.00 SMS/ }).count(), { timeout: 10_000 }).toBe(0);
    expect(unexpected(errors)).toEqual([]);
    await ctx.close();
  });

  it('devices: pairs a phone with a code shown as text and QR code', async () => {
    const { ctx, page, errors } = await open(1280);
    await page.goto(`${t.baseUrl}/admin/devices`);
    await logIn(page, accounts.operator.email, accounts.operator.password);
    await page.getByRole('table', { name: 'Devices' }).waitFor();
    await expectAccessible(page, 'devices');
    await shot(page, 'devices');
    await page.getByRole('button', { name: 'Pair a phone' }).click();
    await page.getByRole('button', { name: 'Create pairing code' }).click();
    const code = await page.getByTestId('pairing-code').innerText();
    expect(code).toMatch(/^[A-Z0-9]{5}-[A-Z0-9]{5}$/);
    // Two codes: the companion app's (the code) and OwnPay's Android app's ({"server_url","otp"}, README "The OwnPay Android app").
    for (const name of [`QR code of pairing code ${code}`, `OwnPay app QR code of pairing code ${code}`]) {
      const qr = page.getByRole('img', { name, exact: true });
      await qr.waitFor();
      expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    }
    await expectAccessible(page, 'pairing dialog');
    await shot(page, 'devices-pairing');
    // The code pairs a phone.
    const paired = await t.request('POST', '/api/mobile/v1/devices/pairings', { token: code, body: { fingerprint: 'f'.repeat(64), device_name: 'Counter phone', app_version: '1.0.0' } });
    expect(paired.status, JSON.stringify(paired.body)).toBe(201);
    await page.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.getByRole('table', { name: 'Devices' }).innerText(), { timeout: 15_000 }).toContain('Counter phone');
    expect(unexpected(errors)).toEqual([]);
    await ctx.close();
  });

  it('webhooks: replays a dead letter', async () => {
    const endpoint = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: scene.apiKey, body: { url: 'http://127.0.0.1:9/hooks', events: ['payment.completed'], enabled: true } });
    expect([200, 201]).toContain(endpoint.status);
    await emitPaymentCompleted(t, scene.brandId, 4242);
    const [delivery] = await t.sql<{ id: string }>(
      `UPDATE webhook_deliveries SET status = 'dead_letter', attempts = 8, dead_lettered_at = now(), next_attempt_at = NULL, last_error = 'connection refused'
       WHERE brand_id = $1 AND event_id IN (SELECT id FROM webhook_events WHERE transaction_id = 4242) RETURNING id`,
      [scene.brandId],
    );
    const { ctx, page, errors } = await open(1280);
    await page.goto(`${t.baseUrl}/admin/webhooks`);
    await logIn(page, accounts.operator.email, accounts.operator.password);
    const table = page.getByRole('table', { name: 'Webhook deliveries' });
    await table.waitFor();
    await expectAccessible(page, 'webhooks');
    await shot(page, 'webhooks');
    const row = table.getByRole('row').filter({ hasText: `#${delivery!.id} ` });
    await row.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `Delivery #${delivery!.id}` }).count()).toBe(1);
    const [after] = await t.sql<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [delivery!.id]);
    expect(after!.status).toBe('pending');
    expect(unexpected(errors)).toEqual([]);
    await ctx.close();
  });

  it('payments: search by reference, open the detail, export the filtered list as CSV', async () => {
    const { transaction } = await seedPayment(t, scene, { amount: '615.50', status: 'completed' });
    const { ctx, page, errors } = await open(1280);
    await page.goto(`${t.baseUrl}/admin/payments`);
    await logIn(page, accounts.viewer.email, accounts.viewer.password);
    await page.getByLabel('Reference').fill(transaction.trxId);
    await page.getByRole('button', { name: 'Search' }).click();
    const table = page.getByRole('table', { name: 'Payments' });
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    expect(page.url()).toContain(`reference=${transaction.trxId}`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = await new Response((await download.createReadStream()) as unknown as ReadableStream).text();
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toMatch(/^id,trx_id,payment_id,brand_id,mode,gateway,/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`${transaction.trxId},`);
    expect(lines[1]).toContain(',615.50,BDT,');
    await table.getByRole('link', { name: transaction.trxId }).click();
    await page.getByRole('heading', { level: 1, name: `Payment ${transaction.trxId}` }).waitFor();
    await page.getByText('Completed by', { exact: true }).waitFor();
    await expectAccessible(page, 'payment detail');
    await shot(page, 'payment-detail');
    expect(unexpected(errors)).toEqual([]);
    await ctx.close();
  });

  it('a real viewer: the console offers no mutating action, and a mutation sent from its session with the real CSRF token is refused (403) and changes nothing', async () => {
    const { transaction } = await seedPayment(t, scene, { amount: '730.00', status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });
    // A viewer created through the admin API (beforeAll), logged in through the form like anyone.
    const { ctx, page, errors } = await open(1280);
    await page.goto(`${t.baseUrl}/admin/review`);
    await logIn(page, accounts.viewer.email, accounts.viewer.password);
    const header = page.getByTestId('operator');
    await header.waitFor();
    expect(await header.innerText()).toContain('viewer');
    const queue = page.getByRole('list', { name: 'Items to review' });
    await queue.getByRole('button', { name: /730\.00 BDT/ }).click();
    await page.getByText('Your role can read the queue but not decide it.').waitFor();
    for (const name of [/^Reject/, /^Verify/]) expect(await page.getByRole('button', { name }).count()).toBe(0);
    await shot(page, 'review-viewer');
    // Devices: readable (presence history included), but no pairing and no revoking.
    await page.goto(`${t.baseUrl}/admin/devices`);
    await page.getByRole('table', { name: 'Devices' }).waitFor();
    expect(await page.getByRole('button', { name: /^Presence history of / }).count()).toBeGreaterThan(0);
    for (const name of ['Pair a phone', 'Revoke']) expect(await page.getByRole('button', { name }).count()).toBe(0);
    await shot(page, 'devices-viewer');

    // The same browser session asks anyway, with its real cookie and CSRF token: the server refuses.
    const auditBefore = await t.sql<{ n: string }>('SELECT count(*) AS n FROM audit_log');
    const answers = await page.evaluate(
      async ({ txId, deviceId }) => {
        const session = await (await fetch('/api/admin/v1/session')).json();
        const csrf: string = session.data.csrf_token;
        const send = async (path: string, body: unknown) => {
          const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify(body) });
          return { status: res.status, body: await res.json() };
        };
        return {
          csrf,
          reject: await send(`/api/admin/v1/transactions/${txId}/rejections`, { reason: 'trying anyway' }),
          verify: await send(`/api/admin/v1/transactions/${txId}/verifications`, {}),
          revoke: await send(`/api/admin/v1/devices/${deviceId}/revocations`, {}),
        };
      },
      { txId: transaction.id, deviceId: scene.device.deviceId },
    );
    expect(answers.csrf.length).toBeGreaterThan(10);
    for (const [what, answer] of Object.entries({ reject: answers.reject, verify: answers.verify, revoke: answers.revoke })) {
      expect(answer.status, what).toBe(403);
      expect(answer.body, what).toMatchObject({ success: false, errors: [{ code: 'FORBIDDEN' }], request_id: expect.any(String) });
    }
    const [row] = await t.sql<{ status: string; failure_reason: string | null }>('SELECT status, failure_reason FROM transactions WHERE id = $1', [transaction.id]);
    expect(row).toEqual({ status: 'awaiting_verification', failure_reason: null });
    const [device] = await t.sql<{ status: string }>('SELECT status FROM devices WHERE id = $1', [scene.device.deviceId]);
    expect(device!.status).toBe('active');
    expect(await t.sql<{ n: string }>('SELECT count(*) AS n FROM audit_log')).toEqual(auditBefore);
    expect(unexpected(errors)).toEqual([]);
    await ctx.close();
  });

  it.each([1280, 375] as const)('every screen at %i px: laid out, accessible, no console error; an ended session goes back to login; log out', { timeout: 180_000 }, async (width) => {
    {
      const { ctx, page, errors } = await open(width);
      await page.goto(`${t.baseUrl}/admin`);
      await logIn(page, accounts.owner.email, accounts.owner.password);
      await page.getByTestId('operator').waitFor();
      for (const [path, name, ready] of [
        ['/', 'overview', 'Overview'],
        ['/review', 'review-queue', 'Review queue'],
        ['/payments', 'payments', 'Payments'],
        ['/devices', 'devices-list', 'Devices'],
        ['/webhooks', 'webhooks-list', 'Webhook deliveries'],
        ['/refunds', 'refunds', 'Refunds'],
        ['/customers', 'customers-screen', 'Customers'],
        ['/sms', 'sms', 'SMS inbox'],
        ['/audit', 'audit', 'Audit log'],
        ['/gateways', 'gateways', 'Gateways'],
        ['/filter-rules', 'filter-rules', 'SMS filter rules'],
        ['/wallet-accounts', 'wallet-accounts-screen', 'Wallet accounts'],
        ['/reconciliation', 'reconciliation', 'Statement reconciliation'],
        ['/brands', 'brands', 'Brands and API keys'],
        ['/settings', 'settings', 'Settings'],
        ['/operators', 'operators', 'Operators'],
        ['/account', 'account', 'My account'],
      ] as const) {
        await page.goto(`${t.baseUrl}/admin${path}`);
        await page.getByRole('heading', { level: 1, name: new RegExp(`^${ready}`) }).waitFor();
        await page.waitForLoadState('networkidle');
        await page.getByRole('status').filter({ hasText: /^Loading/ }).waitFor({ state: 'detached' }).catch(() => undefined);
        await expectAccessible(page, `${name} at ${width}px`);
        await shot(page, name);
        // Nothing wider than the screen but the tables, which scroll inside their card.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${name} at ${width}px scrolls sideways`).toBeLessThanOrEqual(0);
      }
      if (width === 375) {
        await page.getByRole('button', { name: 'Menu' }).click();
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payments' }).click();
        await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor();
      }
      // The session ends on the server (expired or revoked): the next call sends the console back to login.
      if (width === 1280) {
        await page.goto(`${t.baseUrl}/admin/review`);
        await page.getByRole('heading', { level: 1, name: /^Review queue/ }).waitFor();
        await t.sql('DELETE FROM operator_sessions');
        // The queue's next poll is refused (401): the console says so and asks for the password.
        await page.getByText('Your session has expired. Log in again.').waitFor({ timeout: 15_000 });
        await shot(page, 'session-expired');
        await logIn(page, accounts.owner.email, accounts.owner.password);
        await page.getByTestId('operator').waitFor();
      }
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByText('You have logged out.').waitFor();
      // The cookie is gone on the server too: a reload shows the login form.
      await page.reload();
      await page.getByRole('button', { name: 'Log in' }).waitFor();
      expect(unexpected(errors)).toEqual([]);
      await ctx.close();
    }
  });
});
