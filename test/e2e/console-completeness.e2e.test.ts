import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newGatewayTrxId, smsBodies, smsScene, type SmsScene } from '../support/sms-matching.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * The SMS completeness indicator (docs/recovery.md "Sequence numbers") on the
 * Devices screen and the overview, at 1280 and 375 px: a phone with a hole in
 * its sequence says how many and which are missing, a complete one says none
 * is, one whose app sends no numbers says unknown. axe-core finds nothing.
 */
let t: TestContext;
let browser: Browser;
let scene: SmsScene;
let operators = 0;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off' });
  scene = await smsScene(t);
  browser = await launchChromium();
  const holed = await pairDevice(t, { brandId: scene.brandId, name: 'Holed phone' });
  const whole = await pairDevice(t, { brandId: scene.brandId, name: 'Whole phone' });
  let n = 0;
  const sms = (sequence: number) => ({ device_message_id: `c-${++n}`, sender: 'bKash', body: smsBodies.bkash('10.00', newGatewayTrxId(), '01712345515'), received_at: new Date().toISOString(), sim_slot: 0, sequence });
  for (const [d, body] of [
    [holed, { messages: [sms(1), sms(3)] }],
    [whole, { messages: [sms(1), sms(3)], screened_sequences: [{ sim_slot: 0, from: 2, to: 2 }] }],
  ] as const) {
    const res = await deviceRequest(t, d, 'POST', '/sms/messages', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function openAs(width: 1280 | 375, screen: string) {
  const email = `completeness.${++operators}@console.test`;
  const res = await adminRequest(t, 'POST', '/operators', { email, name: `operator ${operators}`, role: 'operator' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const opened = await openConsolePage(browser, t.baseUrl, width);
  await opened.page.goto(`${t.baseUrl}/admin${screen}`);
  await logIn(opened.page, email, res.body.data.password);
  await opened.page.getByTestId('operator').waitFor();
  return opened;
}

async function indicatorOf(page: Page, name: string): Promise<string> {
  const row = page.locator('tr, li').filter({ hasText: name }).first();
  await row.getByTestId('sms-completeness').waitFor();
  return row.getByTestId('sms-completeness').innerText();
}

describe.each([1280, 375] as const)('SMS completeness at %i px', (width) => {
  it.each(['/devices', '/'])('%s shows per phone whether an SMS is missing', async (screen) => {
    const { ctx, page, errors } = await openAs(width, screen);
    expect(await indicatorOf(page, 'Holed phone')).toMatch(/SMS: 1 missing[\s\S]*SIM 1: #2/);
    expect(await indicatorOf(page, 'Whole phone')).toContain('SMS: none missing');
    await page.waitForLoadState('networkidle');
    const name = `completeness${screen === '/' ? '-overview' : '-devices'}-${width}`;
    await expectAccessible(page, name);
    await shot(page, name);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(unexpectedErrors(errors)).toEqual([]);
    await ctx.close();
  });
});
