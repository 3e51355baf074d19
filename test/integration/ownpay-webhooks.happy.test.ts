import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import { startReceiver, type ReceivedRequest, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { seedGateway } from '../support/seed.ts';
import type { TestContext } from '../support/harness.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import { completeTransaction, startTransaction } from '../../server/domain/payments/transactions.ts';
import { UNREGISTERED_CALLBACK_NOTE } from '../../server/domain/webhooks/outbox.ts';

/**
 * OwnPay's receivers' verification rule, written from their documentation
 * alone (never from their code):
 *
 * - own-pay/OwnPay-WHMCS `README.md`, "Webhook Security": the signature is sent
 *   in the `X-OP-Signature`, `X-Signature` or `X-OwnPay-Signature` header,
 *   computed as HMAC-SHA256 of the raw request body with the webhook secret,
 *   compared timing-safely; a `sha256=` prefix is the standard form.
 * - own-pay/ownpay-laravel `README.md`, "Webhook Verification":
 *   `hash_hmac('sha256', $payload, $secret)`, timing-safe comparison.
 * - own-pay/OwnPay-WordPress `README.txt`: HMAC-SHA256 signed callbacks.
 *
 * Returns the parsed body when a signature header verifies, else throws.
 */
function ownpayVerify(rawBody: string, headers: IncomingHttpHeaders, secret: string): Record<string, any> {
  const header = [headers['x-op-signature'], headers['x-signature'], headers['x-ownpay-signature']].find((h): h is string => typeof h === 'string' && h.length > 0);
  if (!header) throw new Error('no signature header');
  const given = header.startsWith('sha256=') ? header.slice('sha256='.length) : header;
  const expected = createHmac('sha256', secret).update(rawBody).digest('hex');
  if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) throw new Error('signature mismatch');
  return JSON.parse(rawBody);
}

let w: WebhookTestServer;
let t: TestContext;
let receiver: WebhookReceiver;
let brandId: number;
let nativeKey: string;
let opKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  w = await startWebhookTestServer();
  t = w.t;
  receiver = await startReceiver();
  ({ brandId, apiKey: nativeKey } = await t.createBrand('OwnPay Hooks'));
  opKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'whmcs', dialect: 'ownpay' })).key;
  bkash = await seedGateway(t, 'bkash');
});
afterAll(async () => {
  await receiver?.close();
  await w?.close();
});

async function addEndpoint(path: string, events: string[], signing: 'ownpay' | 'paycollect' = 'ownpay'): Promise<{ id: number; secret: string; url: string }> {
  const url = `${receiver.url}${path}`;
  const res = await t.request('POST', '/api/v1/webhooks/endpoints', { token: nativeKey, body: { url, events, signing } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data.signing).toBe(signing);
  return { id: res.body.data.id, secret: res.body.data.secret, url };
}

/** A payment made as the WHMCS module makes it, paid on bKash and completed. */
async function paidPayment(callbackUrl: string | undefined, reference: string) {
  const created = await t.request('POST', '/api/v1/payments', {
    token: opKey,
    body: { amount: '1500', currency: 'BDT', callback_url: callbackUrl, reference, metadata: { invoice_id: reference }, customer_email: 'client@example.com' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const paymentId = created.body.data.payment_id as string;
  const started = await startTransaction(t.runtime.deps.db, t.runtime.deps.crypto, { paymentId, gatewayCode: bkash.code, gatewayTrxId: `GW${reference}` });
  await completeTransaction(t.runtime.deps.db, started.id, { source: 'admin' });
  return { paymentId, transactionId: started.id, trxId: started.trxId };
}

/** Requests to `${receiver.url}${path}` (the receiver's URL has a path of its own). */
const at = (path: string) => (reqs: ReceivedRequest[]) => reqs.filter((r) => r.path.endsWith(path));

describe('an endpoint with OwnPay signing', () => {
  let a: { id: number; secret: string; url: string };
  let paid: Awaited<ReturnType<typeof paidPayment>>;

  beforeAll(async () => {
    a = await addEndpoint('/whmcs', ['payment.completed']);
    paid = await paidPayment(a.url, 'INV1001');
    await receiver.waitFor((reqs) => at('/whmcs')(reqs).length >= 1);
  });

  it('gets a delivery that OwnPay\'s documented rule verifies, with their headers', () => {
    const [req] = at('/whmcs')(receiver.requests);
    const body = ownpayVerify(req!.rawBody, req!.headers, a.secret);
    expect(req!.headers['x-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(req!.headers['x-ownpay-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(`sha256=${req!.headers['x-ownpay-signature']}`).toBe(req!.headers['x-signature']);
    expect(req!.headers['x-event']).toBe('payment.completed');
    expect(req!.headers['x-timestamp']).toMatch(/^\d{10}$/);
    expect(req!.headers['x-ownpay-timestamp']).toBe(req!.headers['x-timestamp']);
    expect(req!.headers['x-webhook-signature']).toBeUndefined();
    // The fields their handlers read (WHMCS callback, WooCommerce webhook).
    expect(body.event).toBe('payment.completed');
    expect(body.data).toMatchObject({
      status: 'completed',
      trx_id: paid.trxId,
      transaction_id: paid.trxId,
      gateway_trx_id: 'GWINV1001',
      payment_id: paid.paymentId,
      id: paid.paymentId,
      amount: '1500.00',
      currency: 'BDT',
      reference: 'INV1001',
      metadata: { invoice_id: 'INV1001' },
    });
    expect(body.timestamp).toEqual(expect.any(Number));
  });

  it('a tampered body or another secret does not verify', () => {
    const [req] = at('/whmcs')(receiver.requests);
    expect(() => ownpayVerify(req!.rawBody.replace('1500.00', '15.00'), req!.headers, a.secret)).toThrow('signature mismatch');
    expect(() => ownpayVerify(req!.rawBody, req!.headers, 'whsec_other')).toThrow('signature mismatch');
  });

  it('the callback_url naming a subscribed endpoint adds no second delivery', async () => {
    const rows = await t.sql<{ n: string }>('SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = $1 AND e.transaction_id = $2', [a.id, paid.transactionId]);
    expect(Number(rows[0]!.n)).toBe(1);
  });
});

describe("a payment's callback_url", () => {
  it('is delivered to when it is a registered endpoint URL, even one not subscribed to the event, signed with its secret', async () => {
    const b = await addEndpoint('/woo', ['payment.failed']);
    const paid = await paidPayment(b.url, 'INV2002');
    await receiver.waitFor((reqs) => at('/woo')(reqs).length >= 1);
    const [req] = at('/woo')(receiver.requests);
    expect(ownpayVerify(req!.rawBody, req!.headers, b.secret).data.trx_id).toBe(paid.trxId);
    const [event] = await t.sql<{ callback_note: string | null }>("SELECT callback_note FROM webhook_events WHERE transaction_id = $1 AND event = 'payment.completed'", [paid.transactionId]);
    expect(event!.callback_note).toBeNull();
  });

  it('is never delivered to when it is not registered, and the event records why', async () => {
    const before = receiver.requests.length;
    const paid = await paidPayment(`${receiver.url}/not-registered`, 'INV3003');
    const [event] = await t.sql<{ id: string; callback_note: string | null }>("SELECT id, callback_note FROM webhook_events WHERE transaction_id = $1 AND event = 'payment.completed'", [paid.transactionId]);
    expect(event!.callback_note).toBe(UNREGISTERED_CALLBACK_NOTE);
    const deliveries = await t.sql<{ url: string }>('SELECT url FROM webhook_deliveries WHERE event_id = $1', [event!.id]);
    expect(deliveries.map((d) => d.url)).not.toContain(`${receiver.url}/not-registered`);
    // The brand's subscribed endpoints still get it; the unregistered URL never does.
    await receiver.waitFor((reqs) => reqs.length > before && reqs.some((r) => r.path.endsWith('/whmcs') && r.rawBody.includes(paid.trxId)));
    expect(receiver.requests.some((r) => r.path.endsWith('/not-registered'))).toBe(false);
  });
});

describe('signing can be changed', () => {
  it('PATCH switches an endpoint between paycollect and ownpay', async () => {
    const c = await addEndpoint('/native', ['payment.completed'], 'paycollect');
    const res = await t.request('PATCH', `/api/v1/webhooks/endpoints/${c.id}`, { token: nativeKey, body: { signing: 'ownpay' } });
    expect(res.status).toBe(200);
    expect(res.body.data.signing).toBe('ownpay');
    const bad = await t.request('PATCH', `/api/v1/webhooks/endpoints/${c.id}`, { token: nativeKey, body: { signing: 'stripe' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('signing');
  });
});

describe('admin API', () => {
  const admin = () => t.runtime.deps.secrets.adminToken;

  it("lists a brand's endpoints with their signing and sets one's signing, audited", async () => {
    const d = await addEndpoint('/admin-set', ['payment.completed'], 'paycollect');
    const list = await t.request('GET', `/api/admin/v1/brands/${brandId}/webhook-endpoints`, { token: admin() });
    expect(list.status).toBe(200);
    expect(list.body.data.find((e: { id: number }) => e.id === d.id)).toMatchObject({ signing: 'paycollect', url: d.url });
    expect(JSON.stringify(list.body)).not.toContain(d.secret);
    const set = await t.request('PATCH', `/api/admin/v1/brands/${brandId}/webhook-endpoints/${d.id}`, { token: admin(), body: { signing: 'ownpay' } });
    expect(set.status).toBe(200);
    expect(set.body.data.signing).toBe('ownpay');
    const audit = await t.sql<{ before: unknown; after: unknown }>("SELECT before, after FROM audit_log WHERE action = 'webhook_endpoint.signing' AND target_id = $1", [String(d.id)]);
    expect(audit).toEqual([{ before: { signing: 'paycollect' }, after: { signing: 'ownpay' } }]);
  });

  it("another brand's endpoint or an unknown brand is not found", async () => {
    const mine = await addEndpoint('/admin-other', ['payment.completed']);
    const other = await t.createBrand('Other brand');
    const res = await t.request('PATCH', `/api/admin/v1/brands/${other.brandId}/webhook-endpoints/${mine.id}`, { token: admin(), body: { signing: 'paycollect' } });
    expect(res.status).toBe(404);
    expect(res.body.errors[0].code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    const none = await t.request('GET', '/api/admin/v1/brands/999999/webhook-endpoints', { token: admin() });
    expect(none.status).toBe(404);
    expect(none.body.errors[0].code).toBe('BRAND_NOT_FOUND');
    const bad = await t.request('PATCH', `/api/admin/v1/brands/${brandId}/webhook-endpoints/${mine.id}`, { token: admin(), body: { signing: 'ownpay', url: 'https://x.example' } });
    expect(bad.status).toBe(400);
  });
});
