import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsScene, type SmsScene } from '../support/sms-matching.ts';
import { enforceRetention } from '../../server/domain/retention/retention.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * An SMS left for review whose text the retention job dropped still shows in
 * the console's review queue and evidence, with its parsed fields, and says
 * "text expired" where the sender and the text were, at 1280 and 375 px.
 */

let t: TestContext;
let browser: Browser;
let scene: SmsScene;
let operator: { email: string; password: string };

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off' });
  scene = await smsScene(t);
  const res = await adminRequest(t, 'POST', '/operators', { email: 'retention@console.test', name: 'Retention Reader', role: 'operator' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  operator = { email: 'retention@console.test', password: res.body.data.password };
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('console: an SMS whose text expired', () => {
  it('stays in review with its evidence and shows "text expired" instead of its sender and text', async () => {
    // Two open payments of one amount: the SMS could prove either, so it waits for a person.
    await seedPayment(t, scene, { amount: '731.00' });
    await seedPayment(t, scene, { amount: '731.00' });
    const trxId = newGatewayTrxId();
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('731.00', trxId) }]);
    expect(sms!.match_status).toBe('low_confidence');
    await t.sql(`UPDATE sms_records SET created_at = now() - interval '91 days' WHERE id = $1`, [sms!.id]);
    const report = await enforceRetention({ db: t.runtime.deps.db, logger: t.runtime.deps.logger, config: t.config });
    expect(report.sms_text_expired).toBe(1);

    for (const width of [1280, 375] as const) {
      const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, width);
      await page.goto(`${t.baseUrl}/admin/review`);
      await logIn(page, operator.email, operator.password);
      const queue = page.getByRole('list', { name: 'Items to review' });
      await queue.waitFor();
      const item = queue.getByRole('button', { name: /731\.00 SMS/ });
      expect(await item.innerText()).toContain('text expired');
      expect(await item.innerText()).toContain(trxId);
      await item.click();
      await expect.poll(() => page.getByTestId('sms-text-expired').innerText()).toContain('Text expired');
      expect(await page.getByTestId('sms-body').count()).toBe(0);
      // The parsed evidence is still there to decide with.
      expect(await page.getByRole('table', { name: 'Payment against SMS' }).innerText()).toContain(trxId);
      await expectAccessible(page, `review-text-expired-${width}`);
      await shot(page, `review-text-expired-${width}`);
      expect(unexpectedErrors(errors)).toEqual([]);
      await ctx.close();
    }
  });
});
