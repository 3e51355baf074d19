import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsScene, type SmsScene } from '../support/sms-matching.ts';
import { launchChromium } from './support/browser.ts';
import { auditEntries, auditEntryText, expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * The review cases an operator closes from the console with nothing but a
 * console login, each in at most four actions (a click, a key, a filled field),
 * at 1280 and at 375 px: a customer's typo in the trx id (verified with the SMS,
 * the claim corrected), two payments of one amount told apart by the declared
 * payer number, a payer mismatch (the `v` key asks first, listing what differs)
 * and an amount difference accepted with a reason. Afterwards the payment's
 * timeline and the audit log screen show both ids and the note. Screenshots
 * under test-results/console/.
 */

let t: TestContext;
let browser: Browser;
let scene: SmsScene;
let operator: { email: string; password: string };

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off' });
  scene = await smsScene(t);
  const res = await adminRequest(t, 'POST', '/operators', { email: 'review.cases@console.test', name: 'Review Cases', role: 'operator' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  operator = { email: 'review.cases@console.test', password: res.body.data.password };
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A distinct amount per case and width, so each case's queue items are told apart by it. */
let cents = 0;
const nextAmount = () => `${600 + ++cents}.00`;

/** The customer's mistyped copy of `real`: its last character replaced by one no wallet prints (1 edit). */
const mistyped = (real: string) => `${real.slice(0, -1)}X`;

async function txStatus(id: number): Promise<{ status: string; gateway_trx_id: string | null }> {
  const [row] = await t.sql<{ status: string; gateway_trx_id: string | null }>('SELECT status, gateway_trx_id FROM transactions WHERE id = $1', [id]);
  return row!;
}

/** The review screen, logged in as the operator (not counted: the case starts on the screen). */
async function reviewPage(width: 1280 | 375) {
  const opened = await openConsolePage(browser, t.baseUrl, width);
  await opened.page.goto(`${t.baseUrl}/admin/review`);
  await logIn(opened.page, operator.email, operator.password);
  await opened.page.getByRole('list', { name: 'Items to review' }).waitFor();
  return opened;
}

/** Counts what the operator does: each click, key press or filled field is one action. */
function actions() {
  let n = 0;
  return {
    async do(step: () => Promise<unknown>) {
      await step();
      n++;
    },
    get count() {
      return n;
    },
  };
}

/** Nothing on the screen is wider than a phone's: the page never scrolls sideways. */
async function noSidewaysScroll(page: Page, what: string) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  // The widest elements, to say what pushes the page out.
  const offenders = await page.evaluate(() =>
    Array.from(document.querySelectorAll('body *'))
      .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest('[role="region"]'))
      .slice(-3)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 40)}`),
  );
  expect(overflow, `${what} scrolls sideways: ${offenders.join(' | ')}`).toBeLessThanOrEqual(0);
}

/** The payment's page: its timeline lists every text given, and the audit log screen has a row for the decision with every text given. */
async function evidenceAfterwards(page: Page, txId: number, timelineTexts: string[], auditTexts: string[], name: string) {
  await page.goto(`${t.baseUrl}/admin/payments/${txId}`);
  const timeline = page.getByRole('list', { name: 'Timeline' });
  await timeline.waitFor();
  for (const text of timelineTexts) await expect.poll(() => timeline.innerText()).toContain(text);
  await shot(page, `${name}-timeline`);
  if (page.viewportSize()!.width === 375) await noSidewaysScroll(page, `${name} payment page`);

  await page.goto(`${t.baseUrl}/admin/audit`);
  await page.getByLabel('Action').fill('transaction.verify');
  const row = auditEntries(page).filter({ hasText: new RegExp(`transaction ${txId}(?!\\d)`) });
  await expect.poll(() => row.count()).toBe(1);
  const entry = await auditEntryText(page, row);
  for (const text of auditTexts) expect(entry).toContain(text);
  await shot(page, `${name}-audit`);
}

for (const width of [1280, 375] as const) {
  describe(`review cases at ${width} px`, () => {
    it('typo: the SMS pairs with the payment whose claimed id is one edit off; one verify corrects the claim to the SMS’s id, with the note', async () => {
      const amount = nextAmount();
      const real = newGatewayTrxId();
      const typo = mistyped(real);
      const { transaction } = await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: typo });
      const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, real) }]);
      expect(sms!.match_status).toBe('low_confidence');
      const note = `Customer mistyped the last character (${width})`;

      const { ctx, page, errors } = await reviewPage(width);
      const queue = page.getByRole('list', { name: 'Items to review' });
      const act = actions();
      await act.do(() => queue.getByRole('button', { name: new RegExp(`${amount.replace('.', '\\.')} SMS`) }).click({ timeout: 15_000 }));
      const candidates = page.getByRole('group', { name: 'Which payment does this SMS prove?' });
      await expect.poll(() => candidates.innerText()).toContain("is 1 edit(s) from the SMS's id");
      await act.do(() => page.getByRole('button', { name: new RegExp(`^Verify with SMS #${sms!.id}`) }).click());
      const dialog = page.getByRole('dialog');
      const listed = await dialog.getByRole('list', { name: 'Differences' }).innerText();
      expect(listed).toContain(typo);
      expect(listed).toContain(real);
      expect(await dialog.innerText()).toContain(`The claimed id ${typo} is corrected to the SMS's ${real}`);
      await expectAccessible(page, `review typo dialog at ${width}px`);
      await shot(page, 'review-case-typo-dialog');
      await act.do(() => dialog.getByLabel('Why you accept it (required)').fill(note));
      await act.do(() => dialog.getByRole('button', { name: 'Verify and correct the id' }).click());
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Verified' }).count()).toBe(1);
      expect(act.count).toBeLessThanOrEqual(4);
      expect(await txStatus(transaction.id)).toEqual({ status: 'completed', gateway_trx_id: real });
      await expect.poll(() => queue.getByRole('button', { name: new RegExp(amount.replace('.', '\\.')) }).count(), { timeout: 10_000 }).toBe(0);
      if (width === 375) await noSidewaysScroll(page, 'review');

      await evidenceAfterwards(page, transaction.id, [typo, real, note], [typo, real, note], 'review-case-typo');
      expect(unexpectedErrors(errors)).toEqual([]);
      await ctx.close();
    });

    it('ambiguous pair: two payments of the same amount are told apart by the declared payer number; the right one is verified', async () => {
      const amount = nextAmount();
      const other = await seedPayment(t, scene, { amount, senderNumber: '01711000111' });
      const right = await seedPayment(t, scene, { amount, senderNumber: '01822000222' });
      const real = newGatewayTrxId();
      const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, real, '01822000222') }]);
      expect(sms!.match_status).toBe('low_confidence');

      const { ctx, page, errors } = await reviewPage(width);
      const queue = page.getByRole('list', { name: 'Items to review' });
      const act = actions();
      await act.do(() => queue.getByRole('button', { name: new RegExp(`${amount.replace('.', '\\.')} SMS`) }).click({ timeout: 15_000 }));
      const candidates = page.getByRole('group', { name: 'Which payment does this SMS prove?' });
      await expect.poll(() => candidates.getByRole('radio').count()).toBe(2);
      // Masked to the last three digits, as the SMS's payer number is.
      const text = await candidates.innerText();
      expect(text).toMatch(/payer \+?\*+111/);
      expect(text).toMatch(/payer \+?\*+222/);
      expect(text).not.toContain('1822000');
      await shot(page, 'review-case-pair');
      await act.do(() => candidates.getByRole('radio', { name: /\*222/ }).check());
      const comparison = await page.getByRole('table', { name: 'Payment against SMS' }).innerText();
      expect(comparison).toMatch(/Payer number\s+\+?\*+222\s+\*+222\s+agrees/);
      await act.do(() => page.getByRole('button', { name: new RegExp(`^Verify with SMS #${sms!.id}`) }).click());
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Verified' }).count()).toBe(1);
      expect(act.count).toBeLessThanOrEqual(4);
      expect(await txStatus(right.transaction.id)).toEqual({ status: 'completed', gateway_trx_id: real });
      expect((await txStatus(other.transaction.id)).status).toBe('pending');

      await evidenceAfterwards(page, right.transaction.id, [real, `SMS #${sms!.id}`], [`gateway_trx_id=${real}`, `sms_record_id=${sms!.id}`], 'review-case-pair');
      expect(unexpectedErrors(errors)).toEqual([]);
      await ctx.close();
    });

    it('payer mismatch: verifying opens a confirmation listing the difference (one v completes nothing); confirmed with a note', async () => {
      const amount = nextAmount();
      const real = newGatewayTrxId();
      const { transaction } = await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: real, senderNumber: '01711000333' });
      const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, real, '01999000444') }]);
      expect(sms!.match_status).toBe('low_confidence');
      const note = `Paid from his brother's wallet, confirmed by phone (${width})`;

      const { ctx, page, errors } = await reviewPage(width);
      const queue = page.getByRole('list', { name: 'Items to review' });
      const act = actions();
      await act.do(() => queue.getByRole('button', { name: new RegExp(`${amount.replace('.', '\\.')} SMS`) }).click({ timeout: 15_000 }));
      await expect.poll(() => page.getByRole('table', { name: 'Payment against SMS' }).innerText()).toMatch(/Payer number[\s\S]*differs/);
      // On a desktop the shortcut, on a phone the button: either asks first.
      if (width === 1280) await act.do(() => page.keyboard.press('v'));
      else await act.do(() => page.getByRole('button', { name: new RegExp(`^Verify with SMS #${sms!.id}`) }).click());
      const dialog = page.getByRole('dialog');
      const listed = await dialog.getByRole('list', { name: 'Differences' }).innerText();
      expect(listed).toMatch(/Payer number: the customer declared \+?\*+333, the SMS names \*+444/);
      expect((await txStatus(transaction.id)).status).toBe('awaiting_verification');
      await expectAccessible(page, `review payer dialog at ${width}px`);
      await shot(page, 'review-case-payer-dialog');
      await act.do(() => dialog.getByLabel('Note (optional)').fill(note));
      await act.do(() => dialog.getByRole('button', { name: 'Verify anyway' }).click());
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Verified' }).count()).toBe(1);
      expect(act.count).toBeLessThanOrEqual(4);
      expect(await txStatus(transaction.id)).toEqual({ status: 'completed', gateway_trx_id: real });

      await evidenceAfterwards(page, transaction.id, [real, note], [`gateway_trx_id=${real}`, note], 'review-case-payer');
      expect(unexpectedErrors(errors)).toEqual([]);
      await ctx.close();
    });

    it('amount difference: the customer sent 5 less; verified accepting the difference with a reason, the payment keeps its amount', async () => {
      const amount = nextAmount();
      const sent = `${Number(amount) - 5}.00`;
      const real = newGatewayTrxId();
      const { transaction } = await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: real });
      const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(sent, real) }]);
      expect(sms!.match_status).toBe('low_confidence');
      const note = `Shop accepts 5 short (${width})`;

      const { ctx, page, errors } = await reviewPage(width);
      const queue = page.getByRole('list', { name: 'Items to review' });
      const act = actions();
      await act.do(() => queue.getByRole('button', { name: new RegExp(`${sent.replace('.', '\\.')} SMS`) }).click({ timeout: 15_000 }));
      await act.do(() => page.getByRole('button', { name: new RegExp(`^Verify with SMS #${sms!.id}`) }).click());
      const dialog = page.getByRole('dialog');
      expect(await dialog.getByRole('list', { name: 'Differences' }).innerText()).toContain(`Amount: the payment is ${amount} BDT, the SMS says ${sent}`);
      const confirm = dialog.getByRole('button', { name: 'Verify and accept the amount' });
      // The reason is required: without it nothing can be sent.
      expect(await confirm.isDisabled()).toBe(true);
      await shot(page, 'review-case-amount-dialog');
      await act.do(() => dialog.getByLabel('Why you accept it (required)').fill(note));
      await act.do(() => confirm.click());
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Verified' }).count()).toBe(1);
      expect(act.count).toBeLessThanOrEqual(4);
      const [row] = await t.sql<{ status: string; amount: string }>('SELECT status, amount FROM transactions WHERE id = $1', [transaction.id]);
      expect(row).toEqual({ status: 'completed', amount });

      await evidenceAfterwards(page, transaction.id, [real, note, `SMS amount ${sent} accepted`], [`sms_amount_accepted=${sent}`, note], 'review-case-amount');
      expect(unexpectedErrors(errors)).toEqual([]);
      await ctx.close();
    });
  });
}

describe('review screen details', () => {
  it('a decision refreshes the other case naming the same payment; a refusal does not follow into the next dialog; the dismiss confirmation says the typed reason', async () => {
    const amount = nextAmount();
    // Two SMS of one amount, both suggesting the same two payments.
    const first = await seedPayment(t, scene, { amount });
    const second = await seedPayment(t, scene, { amount });
    const [a] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, newGatewayTrxId()) }]);
    const [b] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, newGatewayTrxId()) }]);
    expect([a!.match_status, b!.match_status]).toEqual(['low_confidence', 'low_confidence']);

    const { ctx, page, errors } = await reviewPage(1280);
    const queue = page.getByRole('list', { name: 'Items to review' });
    const smsItems = queue.getByRole('button', { name: new RegExp(`${amount.replace('.', '\\.')} SMS`) });
    await expect.poll(() => smsItems.count(), { timeout: 15_000 }).toBe(2);
    const candidates = page.getByRole('group', { name: 'Which payment does this SMS prove?' });
    // Both cases seen once: both payments are on screen as open.
    await smsItems.nth(1).click();
    await expect.poll(() => candidates.getByRole('radio').count()).toBe(2);
    await smsItems.nth(0).click();
    await expect.poll(() => candidates.getByRole('radio').count()).toBe(2);
    await page.getByRole('button', { name: new RegExp(`^Verify with SMS #${a!.id}`) }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Verified' }).count()).toBe(1);
    const [done] = await t.sql<{ id: string }>(`SELECT id FROM transactions WHERE id = ANY($1) AND status = 'completed'`, [[first.transaction.id, second.transaction.id]]);
    const remaining = Number(done!.id) === first.transaction.id ? second : first;

    // The other SMS now offers only the payment still open.
    await expect.poll(() => smsItems.count()).toBe(1);
    await smsItems.first().click();
    await expect.poll(() => candidates.getByRole('radio').count()).toBe(1);
    expect(await candidates.innerText()).toContain(remaining.transaction.trxId);

    // Someone else completes that payment meanwhile: verifying it here is refused...
    expect((await adminRequest(t, 'POST', `/transactions/${remaining.transaction.id}/verifications`, { note: 'paid in cash at the counter' })).status).toBe(200);
    await page.getByRole('button', { name: new RegExp(`^Verify with SMS #${b!.id}`) }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Refused' }).count()).toBe(1);
    // ...and the refusal does not follow into the next dialog.
    await page.getByRole('button', { name: 'Dismiss SMS…' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    await dialog.getByLabel('Reason').fill('A test transfer by the shop owner');
    expect(await dialog.innerText()).toContain(`SMS #${b!.id} leaves the queue without completing anything, dismissed as: “A test transfer by the shop owner”.`);
    await shot(page, 'review-dismiss-dialog');
    await dialog.getByRole('button', { name: 'Dismiss SMS' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `Dismissed SMS #${b!.id}: A test transfer by the shop owner` }).count()).toBe(1);

    // The dismissal's reason and the other person's note are on that payment's timeline.
    await page.goto(`${t.baseUrl}/admin/payments/${remaining.transaction.id}`);
    const timeline = page.getByRole('list', { name: 'Timeline' });
    await expect.poll(() => timeline.innerText()).toContain('A test transfer by the shop owner');
    expect(await timeline.innerText()).toContain('paid in cash at the counter');
    // The one refusal this test provoked (409) is the only failed load.
    expect(unexpectedErrors(errors).filter((e) => !/status of 409/.test(e))).toEqual([]);
    await ctx.close();
  });
});
