import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultGatewayTemplates } from '../../server/domain/sms/templates/presets/index.ts';
import { pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsRow, transactionRow } from '../support/sms-matching.ts';

/**
 * Two gateways of the service sharing an official sender read one SMS
 * differently (docs/matching.md, "Reading the SMS"): when any of them reads it
 * as money out, it is money out, through the device API.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off' });
});
afterAll(() => t?.close());

describe('a debit one gateway knows and another reads as a credit', () => {
  it('is money_out, and the payment claiming its id stays open', async () => {
    const { brandId, apiKey } = await t.createBrand('Readings Brand');
    const device = await pairDevice(t, { brandId });
    const sender = `bK${newGatewayTrxId('').slice(0, 6)}`;
    // An admin's custom template that takes bKash's payment to a personal number for a credit...
    const lax = await seedGateway(t, 'bkash', {
      sms_senders: [sender],
      sms_templates: [{ pattern: String.raw`^Payment Tk (?<amount>[\d,.]+) to \d{11} successful\. Ref 11\.[^\n]{0,60}TrxID (?<trx_id>\w{10})`, flags: 'i', direction: 'in' }],
    });
    // ...next to the bKash preset, which knows the wording as money out.
    await seedGateway(t, 'bkash', { sms_senders: [sender], sms_templates: defaultGatewayTemplates.bkash.templates.map((x) => ({ ...x })) });
    const trxId = newGatewayTrxId('K');
    const { transaction } = await seedPayment(t, { brandId, apiKey, device, gateway: lax }, { amount: '145.00', status: 'awaiting_verification', gatewayTrxId: trxId });

    const body = `Payment Tk 145.00 to 01700000026 successful. Ref 11. Fee Tk 0.00. Balance Tk 139.40. TrxID ${trxId} at 14/11/2024 23:25`;
    const [answer] = await forwardSms(t, device, [{ sender, body }]);
    expect(answer).toMatchObject({ match_status: 'money_out', trx_id: null });
    expect(await smsRow(t, answer!.id)).toMatchObject({ reason_code: 'money_out', transaction_id: null });
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
    expect(await eventsOf(t, transaction.id)).toEqual([]);
  });
});
