import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as deviceSim } from '../../scripts/device-sim.ts';
import { newPairingCode, pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newGatewayTrxId, seedPayment, smsBodies, smsScene, transactionRow, type SmsScene } from '../support/sms-matching.ts';
import { launchChromium } from './support/browser.ts';
import { auditEntries, expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * Recovery in the console, as an operator with only a console login, against
 * the real server and database in a real Chromium, at 1280 and 375 px: a
 * missed SMS pasted closes the payment it proves; a phone asked to re-send a
 * window answers (the device simulator, on the device SDK) and the request's
 * progress shows; a sample SMS tried on a gateway's templates is read out in
 * words. Each case is at most four actions after logging in; refusals show the
 * server's message next to the field. axe-core finds nothing, of any impact.
 */

let t: TestContext;
let browser: Browser;
let scene: SmsScene;
let simDir: string;
const WIDTHS = [1280, 375] as const;

let operators = 0;
async function newOperator(role: 'owner' | 'operator'): Promise<{ email: string; password: string }> {
  const email = `recovery.${role}.${++operators}@console.test`;
  const res = await adminRequest(t, 'POST', '/operators', { email, name: `${role} ${operators}`, role });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { email, password: res.body.data.password };
}

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off' });
  scene = await smsScene(t);
  browser = await launchChromium();
  simDir = mkdtempSync(path.join(os.tmpdir(), 'console-recovery-sim-'));
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  if (simDir) rmSync(simDir, { recursive: true, force: true });
});

async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.getByRole('status').filter({ hasText: /^Loading/ }).waitFor({ state: 'detached' }).catch(() => undefined);
}

/** axe finds nothing of any impact; and the page is no wider than the screen (tables scroll inside themselves). */
async function checkScreen(page: Page, name: string): Promise<void> {
  await settled(page);
  await expectAccessible(page, name);
  await shot(page, name);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} scrolls sideways`).toBeLessThanOrEqual(0);
}

async function openAs(width: 1280 | 375, role: 'owner' | 'operator', screen: string) {
  const who = await newOperator(role);
  const opened = await openConsolePage(browser, t.baseUrl, width);
  await opened.page.goto(`${t.baseUrl}/admin${screen}`);
  await logIn(opened.page, who.email, who.password);
  await opened.page.getByTestId('operator').waitFor();
  return opened;
}

describe.each(WIDTHS)('console recovery at %i px', (width) => {
  it('a missed SMS pasted on the SMS screen completes the payment waiting for it: said in words, in its timeline and the audit log', async () => {
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '450.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const { ctx, page, errors } = await openAs(width, 'operator', '/sms');

    // 1-4: open the form, pick the phone, paste the text, store it (sender and time keep their defaults: bKash, now).
    await page.getByRole('button', { name: 'Paste a missed SMS' }).click();
    await page.getByLabel('Phone that received it').selectOption(String(scene.device.deviceId));
    await page.getByLabel('SMS text').fill(smsBodies.bkash('450.00', trxId, '01712345515'));
    await page.getByRole('button', { name: 'Store and match the SMS' }).click();

    const form = page.getByRole('region', { name: 'Paste a missed SMS' });
    const outcome = form.getByRole('status').filter({ hasText: 'Stored as SMS' });
    await expect.poll(() => outcome.innerText()).toContain(`payment #${transaction.id} (${transaction.trxId}) is completed`);
    expect(await outcome.innerText()).toContain(`trx id ${trxId}`);
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    await checkScreen(page, 'recovery-paste-matched');

    // Its timeline says it was completed; the audit log has the paste.
    await outcome.getByRole('link', { name: `payment #${transaction.id}` }).click();
    const timeline = page.getByRole('list', { name: 'Timeline' });
    await expect.poll(() => timeline.innerText()).toMatch(/completed/i);
    await page.goto(`${t.baseUrl}/admin/audit`);
    await page.getByLabel('Action').fill('sms_record.paste');
    await expect.poll(() => auditEntries(page).filter({ hasText: 'sms_record.paste' }).count()).toBeGreaterThan(0);
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });

  it('a pasted SMS no payment claims is said to go to review, with the reason; the same text pasted again is a duplicate', async () => {
    const { ctx, page, errors } = await openAs(width, 'operator', `/sms?paste=1&device=${scene.device.deviceId}`);
    const text = smsBodies.bkash('333.00', newGatewayTrxId(), '01712345515');
    await page.getByLabel('SMS text').fill(text);
    await page.getByRole('button', { name: 'Store and match the SMS' }).click();
    const outcome = page.getByRole('region', { name: 'Paste a missed SMS' }).getByRole('status').filter({ hasText: 'Stored as SMS' });
    await expect.poll(() => outcome.innerText()).toMatch(/sent to review \(no candidate\): it proves no payment by itself\./);
    const id = Number(/Stored as SMS #(\d+)/.exec(await outcome.innerText())![1]);
    const [row] = await t.sql<{ reason: string }>('SELECT reason FROM sms_records WHERE id = $1', [id]);
    expect(await outcome.innerText()).toContain(row!.reason);

    await page.getByLabel('SMS text').fill(text);
    await page.getByRole('button', { name: 'Store and match the SMS' }).click();
    await expect.poll(() => outcome.innerText()).toContain(`Already received: this text is a duplicate of SMS #${id}`);
    await checkScreen(page, 'recovery-paste-duplicate');
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });

  it('pasting refuses bad input next to its field, and a revoked phone next to the phone', async () => {
    const till = await pairDevice(t, { brandId: scene.brandId, name: `Till ${width}` });
    const { ctx, page, errors } = await openAs(width, 'operator', '/sms?paste=1');
    const body = page.getByLabel('SMS text');
    // No text: the server's message under the text box, which is marked invalid and described by it.
    await page.getByRole('button', { name: 'Store and match the SMS' }).click();
    const bodyError = page.locator('#paste-body-error');
    await expect.poll(() => bodyError.innerText()).toContain('(body, VALIDATION_ERROR)');
    expect(await body.getAttribute('aria-invalid')).toBe('true');
    expect(await body.getAttribute('aria-describedby')).toBe('paste-body-error');
    await checkScreen(page, 'recovery-paste-invalid');

    // The phone is revoked while the form is open: refused, named at the phone's field, nothing stored.
    await page.getByLabel('Phone that received it').selectOption(String(till.deviceId));
    await body.fill(smsBodies.bkash('75.00', newGatewayTrxId(), '01712345515'));
    expect((await adminRequest(t, 'POST', `/devices/${till.deviceId}/revocations`)).status).toBe(200);
    await page.getByRole('button', { name: 'Store and match the SMS' }).click();
    const deviceError = page.locator('#paste-device-error');
    await expect.poll(() => deviceError.innerText()).toContain('The device is revoked');
    expect(await deviceError.innerText()).toContain('device_id, DEVICE_REVOKED');
    expect(await page.getByLabel('Phone that received it').getAttribute('aria-invalid')).toBe('true');
    expect(await t.sql('SELECT id FROM sms_records WHERE device_id = $1', [till.deviceId])).toEqual([]);
    expect(unexpectedErrors(errors).filter((e) => !/status of 409/.test(e))).toEqual([]);
    await ctx.close();
  });

  it('a phone asked to re-send its SMS answers through the device SDK; the request shows its progress and the missed payment completes', async () => {
    // The simulated phone received the payment's SMS but never forwarded it (the app was killed).
    const state = path.join(simDir, `state-${width}.json`);
    const sim = async (...argv: string[]) => {
      const out: string[] = [];
      const code = await deviceSim([...argv, '--state', state], { out: (l) => out.push(l), err: (l) => out.push(l) });
      expect(code, out.join('\n')).toBe(0);
      return out.join('\n');
    };
    const name = `Counter phone ${width}`;
    await sim('pair', '--code', await newPairingCode(t, scene.brandId), '--base-url', t.baseUrl, '--name', name);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '820.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    await sim('sms', '--from', 'bKash', '--body', smsBodies.bkash('820.00', trxId, '01712345515'), '--received-at', new Date(Date.now() - 5 * 60_000).toISOString(), '--miss');

    const { ctx, page, errors } = await openAs(width, 'operator', '/devices');
    // 1-2: open the phone's re-send panel, ask for the default window (the last 24 hours).
    await page.getByRole('button', { name: `Ask ${name} to re-send SMS` }).click();
    const panel = page.getByRole('region', { name: `Re-send SMS from ${name}` });
    await panel.waitFor();
    await panel.getByRole('button', { name: 'Ask the phone' }).click();
    const requests = panel.getByRole('list', { name: 'Backfill requests' });
    await expect.poll(() => requests.innerText()).toContain('Waiting for the phone to fetch it.');
    expect(await requests.innerText()).toMatch(/pending[\s\S]*asked by an operator \(recovery\.operator\.\d+@console\.test\)/);
    await checkScreen(page, 'recovery-backfill-pending');

    // The phone polls its commands, re-sends the window and answers: the panel follows by itself.
    expect(await sim('backfill')).toMatch(/re-sent 1 SMS/);
    await expect.poll(() => requests.innerText()).toMatch(/answered[\s\S]*the phone re-sent 1 SMS/);
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    await checkScreen(page, 'recovery-backfill-answered');

    // A window that ends before it starts: the server names `to`, shown under it.
    await panel.getByLabel('To').fill('2026-01-01T10:00');
    await panel.getByRole('button', { name: 'Ask the phone' }).click();
    await expect.poll(() => panel.locator('#backfill-to-error').innerText()).toContain('Must be after `from` (to, VALIDATION_ERROR)');
    expect(await panel.getByLabel('To').getAttribute('aria-invalid')).toBe('true');

    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });

  it('a phone revoked while its re-send panel is open is refused, said next to the request', async () => {
    const till = await pairDevice(t, { brandId: scene.brandId, name: `Back till ${width}` });
    // Opened from a link (the paste form's "ask the phone to re-send"): the panel is open on arrival.
    const { ctx, page, errors } = await openAs(width, 'operator', `/devices?backfill=${till.deviceId}`);
    const panel = page.getByRole('region', { name: `Re-send SMS from Back till ${width}` });
    // The link opens the panel only for an active phone, once the device list has loaded: wait for it to be open,
    // so the revocation below happens while the panel is open (revoking first would leave no panel to click).
    await panel.getByRole('button', { name: 'Ask the phone' }).waitFor();
    expect((await adminRequest(t, 'POST', `/devices/${till.deviceId}/revocations`)).status).toBe(200);
    await panel.getByRole('button', { name: 'Ask the phone' }).click();
    await expect.poll(() => panel.locator('#backfill-device-error').innerText()).toContain('The device is revoked (device_id, DEVICE_REVOKED)');
    expect(await t.sql('SELECT id FROM backfill_requests WHERE device_id = $1', [till.deviceId])).toEqual([]);
    await checkScreen(page, 'recovery-backfill-revoked');
    expect(unexpectedErrors(errors).filter((e) => !/status of 409/.test(e))).toEqual([]);
    await ctx.close();
  });

  it("a sample SMS tried on the gateway's templates is read out in words; one no template reads says so; an empty one is refused at its field", async () => {
    const { ctx, page, errors } = await openAs(width, 'owner', '/gateways');
    await page.getByRole('button', { name: new RegExp(scene.gateway.code) }).click();
    const tryout = page.getByRole('region', { name: 'Try a sample SMS' });
    const result = tryout.getByTestId('tryout-result');

    // 1-2: paste, try.
    await tryout.getByLabel('Sample SMS').fill(smsBodies.bkash('1200.00', '8AB3CD4EF5', '01712345678'));
    await tryout.getByRole('button', { name: 'Try the sample' }).click();
    await expect.poll(() => result.innerText()).toContain('Recognised as a bKash payment received: amount 1,200.00 BDT, trx id 8AB3CD4EF5, from ********678');
    expect(await result.innerText()).not.toMatch(/[{}]|\(\?</);
    await checkScreen(page, 'recovery-tryout-recognised');

    await tryout.getByLabel('Sample SMS').fill('Your parcel is on its way. Thank you for shopping with us.');
    await tryout.getByRole('button', { name: 'Try the sample' }).click();
    await expect.poll(() => result.innerText()).toMatch(/^Not recognised: None of the \d+ templates matches this text\.$/);

    await tryout.getByLabel('Sender').fill('01999000111');
    await tryout.getByRole('button', { name: 'Try the sample' }).click();
    await expect.poll(() => result.innerText()).toContain('Not recognised: "01999000111" is not one of the official senders');

    await tryout.getByLabel('Sample SMS').fill('');
    await tryout.getByRole('button', { name: 'Try the sample' }).click();
    const err = tryout.locator('#tryout-body-error');
    await expect.poll(() => err.innerText()).toContain('(samples.0.body, VALIDATION_ERROR)');
    expect(await tryout.getByLabel('Sample SMS').getAttribute('aria-invalid')).toBe('true');
    await checkScreen(page, 'recovery-tryout-invalid');
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });
});
