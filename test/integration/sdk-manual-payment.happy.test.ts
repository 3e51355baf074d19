import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { newPairingCode } from '../support/device.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { PaycollectMerchant, WebhookSignatureError, type WebhookEvent } from '../../clients/merchant/index.ts';
import { run } from '../../scripts/device-sim.ts';
import { bdNow } from '../support/sms-matching.ts';

/*
 * A manual-gateway payment end to end, with only the integrators' tools: the
 * merchant SDK creates the payment and verifies the webhook, the customer pays on
 * the checkout API, and the device simulator (the device SDK) forwards the
 * gateway's SMS that completes it.
 */

let t: TestContext;
let dir: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  dir = mkdtempSync(path.join(os.tmpdir(), 'manual-payment-'));
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function sim(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run([...argv, '--state', path.join(dir, 'phone.json'), '--json'], { out: (l) => out.push(l), err: (l) => err.push(l) });
  expect(code, err.join('\n')).toBe(0);
  return JSON.parse(out.join('\n'));
}

/** The body of a bKash "money received" SMS, dated like the real ones (dd/mm/yyyy HH:MM). */
function bkashSms(amount: string, trxId: string): string {
  return `You have received Tk ${amount} from 01712345678. Fee Tk 0.00. Balance Tk 9,500.00. TrxID ${trxId} at ${bdNow('dmy')}`;
}

describe('a manual bKash payment, driven by the SDKs and the device simulator', () => {
  it('merchant creates, customer pays, the phone forwards the SMS, the payment completes and the webhook verifies', async () => {
    const { brandId, apiKey } = await t.createBrand('E2E Shop');
    const gateway = await seedGateway(t, 'bkash');
    const merchant = new PaycollectMerchant({ apiKey, baseUrl: t.baseUrl });

    // The merchant subscribes to payment.completed and keeps the secret shown once.
    const events: WebhookEvent[] = [];
    let secret = '';
    receiver = await startReceiver((req) => {
      try {
        events.push(merchant.webhooks.constructEvent(req.rawBody, req.headers as Record<string, string>, secret));
        return { status: 200 };
      } catch (err) {
        return { status: err instanceof WebhookSignatureError ? 401 : 500 };
      }
    });
    const endpoint = await merchant.webhooks.putEndpoint({ url: receiver.url, events: ['payment.completed'] });
    if (!('secret' in endpoint)) throw new Error('a new endpoint shows its secret');
    secret = endpoint.secret;

    // The shop's phone is paired and online.
    const paired = await sim('pair', '--code', await newPairingCode(t, brandId), '--base-url', t.baseUrl, '--name', 'Shop phone');
    await sim('heartbeat', '--battery', '64', '--network', 'cellular');

    // The merchant creates the payment; the customer sends money by bKash and enters the TrxID at checkout.
    const created = await merchant.payments.create({ amount: '750.00', currency: 'BDT', reference: 'order-e2e-1' });
    const pay = await t.request('POST', `/api/checkout/v1/payments/${created.payment_id}/transactions`, {
      body: { gateway: gateway.code, gateway_trx_id: 'E2EBK7TRX1', sender_number: '01712345678' },
    });
    expect(pay.status, JSON.stringify(pay.body)).toBe(201);
    const waiting = await merchant.payments.get(created.payment_id);
    expect(waiting).toMatchObject({ object: 'transaction', status: 'awaiting_verification', gateway_trx_id: 'E2EBK7TRX1' });

    // The gateway's SMS reaches the phone, passes the filter rules and is forwarded.
    const forwarded = await sim('sms', '--from', 'bKash', '--body', bkashSms('750.00', 'E2EBK7TRX1'), '--id', 'inbox-1001');
    expect(forwarded.results).toEqual([
      { forwarded: true, device_message_id: 'inbox-1001', id: expect.any(Number), match_status: 'matched', screen_reason: null, trx_id: waiting.trx_id, duplicate_of: null },
    ]);

    // The merchant sees it completed, over the API and by a verified webhook.
    const done = await merchant.payments.get(created.payment_id);
    expect(done).toMatchObject({ status: 'completed', amount: '750.00', gateway: gateway.code, trx_id: waiting.trx_id });
    expect(Date.parse(done.completed_at!)).toBeGreaterThan(Date.parse(done.created_at) - 1);
    await receiver.waitFor((reqs) => reqs.some((r) => r.status === 200));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: 'payment.completed', data: { trx_id: waiting.trx_id, amount: '750.00' } });

    // The phone's dashboard shows it; forwarding the same SMS again changes nothing.
    const dashboard = await sim('dashboard');
    expect(dashboard.recent_transactions[0]).toMatchObject({ trx_id: waiting.trx_id, status: 'completed', amount: '750.00' });
    expect(dashboard.today).toMatchObject({ revenue: '750.00', currency: 'BDT', revenue_by_currency: [{ currency: 'BDT', amount: '750.00' }], total: 1, pending: 0 });
    const again = await sim('sms', '--from', 'bKash', '--body', bkashSms('750.00', 'E2EBK7TRX1'), '--id', 'inbox-1001');
    expect(again.results[0]).toMatchObject({ id: forwarded.results[0].id, match_status: 'matched' });
    expect(paired.device_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
