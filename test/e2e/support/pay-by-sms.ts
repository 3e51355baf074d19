import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestContext } from '../../support/harness.ts';
import { deviceRequest, type PairedDevice } from '../../support/device.ts';
import { creditWithBalance } from '../../support/sms-matching.ts';

/**
 * Pays the hosted checkout the page is on with a manual bKash gateway, as the
 * customer and the merchant's phone do it: the gateway's panel opened (the only
 * gateway's opens by itself; a click on its summary would close it), the TrxID
 * and the payer's number submitted, then the phone forwards bKash's SMS for the
 * money, whose balance continues the phone's chain (the matcher checks it); the
 * SMS completes the payment. Waits for the completed state and the return to
 * the success URL (`returnTo`). Language-neutral: it reads no text but amounts.
 */
export async function payByBkashSms(
  page: Page,
  o: {
    t: TestContext;
    phone: PairedDevice;
    gatewayCode: string;
    trxId: string;
    payer: string;
    /** The SMS amount, e.g. `1200.00`. */
    amount: string;
    /** The wallet balance the SMS states after this payment, e.g. `11,200.00`. */
    balance: string;
    deviceMessageId: string;
    /** Checked on the panel before paying: the amount the customer is told to send. */
    sendAmount?: string;
    returnTo: RegExp;
  },
): Promise<void> {
  const panel = `details[data-gateway="${o.gatewayCode}"]`;
  if ((await page.getAttribute(panel, 'open')) === null) await page.click(`${panel} summary`);
  if (o.sendAmount !== undefined) expect(await page.innerText(`${panel} .send-amount`)).toContain(o.sendAmount);
  await page.fill(`${panel} input[name=gateway_trx_id]`, o.trxId);
  await page.fill(`${panel} input[name=sender_number]`, o.payer);
  await page.click(`${panel} button[type=submit]`);
  await page.waitForSelector('main[data-status="awaiting_verification"]');

  const res = await deviceRequest(o.t, o.phone, 'POST', '/sms/messages', {
    messages: [{ device_message_id: o.deviceMessageId, sender: 'bKash', body: creditWithBalance(o.amount, o.trxId, o.balance, o.payer), received_at: new Date().toISOString() }],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await page.waitForSelector('main[data-status="completed"]', { timeout: 15_000 });
  await page.waitForURL(o.returnTo, { timeout: 15_000 });
}
