import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../server/infra/crypto/tokens.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import type { TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { createPayment, requestRefund, seedGateway, seedTransaction } from '../support/seed.ts';
import { forwardSms, newGatewayTrxId, smsBodies, smsRow, transactionRow } from '../support/sms-matching.ts';
import { startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import { adminRequest } from './admin-support.ts';

/**
 * Test and live mode (SECURITY.md "Modes"): a key sees and creates only its
 * mode's objects, the sandbox takes only test payments, and only a device of
 * the payment's mode can prove it with an SMS.
 */

let server: WebhookTestServer;
let t: TestContext;
let brandId: number;
let liveKey: string;
let testKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;
let liveDevice: PairedDevice;
let testDevice: PairedDevice;

const em = () => t.runtime.deps.db;

function expectError(res: { status: number; body: any }, status: number, code: string, field: string | null = null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.errors[0]).toMatchObject({ code, field });
}

beforeAll(async () => {
  server = await startWebhookTestServer();
  t = server.t;
  ({ brandId, apiKey: liveKey } = await t.createBrand('Two-mode Shop'));
  testKey = (await createApiKey(em(), brandId, { name: 'test key', mode: 'test' })).key;
  bkash = await seedGateway(t, 'bkash', { sort_order: 1 });
  sandbox = await seedGateway(t, 'sandbox', { sort_order: 2, currencies: ['BDT', 'JPY'] });
  liveDevice = await pairDevice(t, { brandId, name: 'Shop phone', mode: 'live' });
  testDevice = await pairDevice(t, { brandId, name: 'Test phone', mode: 'test' });
});
afterAll(() => server?.close());

describe('keys', () => {
  it('new keys are secret keys: sk_live_ and sk_test_', () => {
    expect(liveKey).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
    expect(testKey).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
  });

  it('keys issued before (pk_live_, pk_test_) keep working, each in its own mode', async () => {
    const legacy = { live: `pk_live_${randomBytes(20).toString('hex')}`, test: `pk_test_${randomBytes(20).toString('hex')}` };
    // As the migration left them: the mode read from the prefix.
    for (const [mode, key] of Object.entries(legacy)) {
      await t.sql('INSERT INTO api_keys (brand_id, name, prefix, key_hash, mode) VALUES ($1, $2, $3, $4, $5)', [brandId, `old ${mode}`, key.slice(0, 12), hashApiKey(key), mode]);
    }
    const livePayment = await createPayment(t, legacy.live);
    const testPayment = await createPayment(t, legacy.test);
    expect((await t.request('GET', `/api/v1/payments/${livePayment.payment_id}`, { token: liveKey })).body.data.livemode).toBe(true);
    expect((await t.request('GET', `/api/v1/payments/${testPayment.payment_id}`, { token: testKey })).body.data.livemode).toBe(false);
    expectError(await t.request('GET', `/api/v1/payments/${testPayment.payment_id}`, { token: legacy.live }), 404, 'PAYMENT_NOT_FOUND');
  });
});

describe('the sandbox exists only in test mode', () => {
  it("a live payment's checkout never offers the sandbox; a test payment's does", async () => {
    const live = await createPayment(t, liveKey);
    const test = await createPayment(t, testKey);
    const codes = async (id: string) => (await t.request('GET', `/api/checkout/v1/payments/${id}`)).body.data.gateways.map((g: { code: string }) => g.code);
    expect(await codes(live.payment_id)).toEqual([bkash.code]);
    expect(await codes(test.payment_id)).toEqual([bkash.code, sandbox.code]);
    const page = await (await fetch(`${t.baseUrl}/checkout/${live.payment_id}`)).text();
    expect(page).not.toContain(sandbox.code);
  });

  it('paying a live payment on the sandbox anyway is refused and creates nothing', async () => {
    const live = await createPayment(t, liveKey);
    const res = await t.request('POST', `/api/checkout/v1/payments/${live.payment_id}/transactions`, { body: { gateway: sandbox.code } });
    expectError(res, 422, 'GATEWAY_UNAVAILABLE', 'gateway');
    expect(await t.sql('SELECT t.id FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1', [live.payment_id])).toEqual([]);
    expect(await t.sql('SELECT s.id FROM sandbox_sessions s JOIN transactions t ON t.id = s.transaction_id JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1', [live.payment_id])).toEqual([]);
    // The same on a test payment starts the sandbox.
    const test = await createPayment(t, testKey);
    const ok = await t.request('POST', `/api/checkout/v1/payments/${test.payment_id}/transactions`, { body: { gateway: sandbox.code } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.data.redirect_url).toMatch(/\/sandbox\/pay\//);
  });

  it('a live payment only the sandbox could take is refused at creation; in test mode it is created', async () => {
    // Only the sandbox takes JPY (and no rate converts it).
    const live = await t.request('POST', '/api/v1/payments', { token: liveKey, body: { amount: '500.00', currency: 'JPY' } });
    expectError(live, 422, 'CURRENCY_NOT_SUPPORTED', 'currency');
    expect(await t.sql("SELECT id FROM payment_intents WHERE currency = 'JPY' AND mode = 'live'")).toEqual([]);
    const test = await t.request('POST', '/api/v1/payments', { token: testKey, body: { amount: '500.00', currency: 'JPY' } });
    expect(test.status, JSON.stringify(test.body)).toBe(201);
    expect(test.body.data.livemode).toBe(false);
  });
});

describe('a key sees only its own mode', () => {
  it('payments: each key gets PAYMENT_NOT_FOUND for the other mode, exactly as for an unknown id', async () => {
    const live = await createPayment(t, liveKey);
    const test = await createPayment(t, testKey);
    const unknown = await t.request('GET', '/api/v1/payments/00000000-0000-4000-8000-000000000000', { token: testKey });
    const crossed = await t.request('GET', `/api/v1/payments/${live.payment_id}`, { token: testKey });
    expectError(crossed, 404, 'PAYMENT_NOT_FOUND');
    expect(crossed.body.errors).toEqual(unknown.body.errors);
    expectError(await t.request('GET', `/api/v1/payments/${test.payment_id}`, { token: liveKey }), 404, 'PAYMENT_NOT_FOUND');
    expect((await t.request('GET', `/api/v1/payments/${live.payment_id}`, { token: liveKey })).body.data).toMatchObject({ payment_id: live.payment_id, livemode: true });
    expect((await t.request('GET', `/api/v1/payments/${test.payment_id}`, { token: testKey })).body.data).toMatchObject({ payment_id: test.payment_id, livemode: false });
  });

  it('refunds: the other mode\'s transaction cannot be refunded, looked up or listed', async () => {
    const live = await seedTransaction(t, { apiKey: liveKey, gateway: bkash });
    const test = await seedTransaction(t, { apiKey: testKey, gateway: bkash });
    expectError(await requestRefund(t, testKey, { trx_id: live.transaction.trxId, amount: '1.00' }), 404, 'PAYMENT_NOT_FOUND', 'trx_id');
    expectError(await requestRefund(t, testKey, { trx_id: live.transaction.gatewayTrxId!, amount: '1.00' }), 404, 'PAYMENT_NOT_FOUND', 'trx_id');
    expectError(await requestRefund(t, liveKey, { trx_id: test.transaction.trxId, amount: '1.00' }), 404, 'PAYMENT_NOT_FOUND', 'trx_id');
    expect(await t.sql('SELECT id FROM refunds WHERE transaction_id = ANY($1::bigint[])', [[live.transaction.id, test.transaction.id]])).toEqual([]);

    const liveRefund = await requestRefund(t, liveKey, { trx_id: live.transaction.trxId, amount: '10.00' });
    const testRefund = await requestRefund(t, testKey, { trx_id: test.transaction.trxId, amount: '20.00' });
    expect([liveRefund.status, liveRefund.body.data.livemode, testRefund.status, testRefund.body.data.livemode]).toEqual([201, true, 201, false]);
    expectError(await t.request('GET', `/api/v1/refunds/${live.transaction.trxId}`, { token: testKey }), 404, 'PAYMENT_NOT_FOUND');
    expectError(await t.request('GET', `/api/v1/refunds/${test.transaction.trxId}`, { token: liveKey }), 404, 'PAYMENT_NOT_FOUND');
    const ids = async (key: string) => (await t.request('GET', '/api/v1/refunds?per_page=100', { token: key })).body.data.map((r: { id: number }) => r.id);
    expect(await ids(liveKey)).toContain(liveRefund.body.data.id);
    expect(await ids(liveKey)).not.toContain(testRefund.body.data.id);
    expect(await ids(testKey)).toEqual([testRefund.body.data.id]);
  });

  it('customers: the same email is one customer per mode; a key finds and lists only its own', async () => {
    const email = `dual-${randomBytes(3).toString('hex')}@example.com`;
    await createPayment(t, liveKey, { customer: { name: 'Live Person', email } });
    await createPayment(t, testKey, { customer: { name: 'Test Person', email } });
    const asLive = await t.request('GET', `/api/v1/customers/${encodeURIComponent(email)}`, { token: liveKey });
    const asTest = await t.request('GET', `/api/v1/customers/${encodeURIComponent(email)}`, { token: testKey });
    expect(asLive.body.data).toMatchObject({ name: 'Live Person', email, livemode: true });
    expect(asTest.body.data).toMatchObject({ name: 'Test Person', email, livemode: false });
    expect(asTest.body.data.uuid).not.toBe(asLive.body.data.uuid);
    const names = async (key: string) => (await t.request('GET', '/api/v1/customers?per_page=100', { token: key })).body.data.map((c: { name: string }) => c.name);
    expect(await names(testKey)).toEqual(['Test Person']);
    expect(await names(liveKey)).toContain('Live Person');
    expect(await names(liveKey)).not.toContain('Test Person');
  });

  it('an Idempotency-Key is per mode: a test request neither takes nor blocks the live key, and each mode replays its own', async () => {
    const headers = { 'Idempotency-Key': `order-${randomBytes(4).toString('hex')}` };
    const body = { amount: '250.00', currency: 'BDT', reference: 'same-body' };
    const test = await t.request('POST', '/api/v1/payments', { token: testKey, body, headers });
    expect(test.status).toBe(201);
    // The live request with the same key (and even another body) is a request of its own.
    const live = await t.request('POST', '/api/v1/payments', { token: liveKey, body: { ...body, amount: '260.00' }, headers });
    expect(live.status, JSON.stringify(live.body)).toBe(201);
    expect(live.headers.get('idempotent-replayed')).toBeNull();
    expect(live.body.data).toMatchObject({ amount: '260.00', livemode: true });
    expect(live.body.data.payment_id).not.toBe(test.body.data.payment_id);
    // Each key replays its own mode's response.
    const again = await t.request('POST', '/api/v1/payments', { token: testKey, body, headers });
    expect([again.status, again.headers.get('idempotent-replayed'), again.body.data.payment_id]).toEqual([201, 'true', test.body.data.payment_id]);
    const liveAgain = await t.request('POST', '/api/v1/payments', { token: liveKey, body: { ...body, amount: '260.00' }, headers });
    expect([liveAgain.status, liveAgain.headers.get('idempotent-replayed'), liveAgain.body.data.payment_id]).toEqual([201, 'true', live.body.data.payment_id]);
  });
});

describe('only a device of the payment\'s mode proves it', () => {
  it("a test device's SMS never completes a live payment; the live device's does", async () => {
    const trxId = newGatewayTrxId();
    const body = smsBodies.bkash('640.00', trxId);
    const { transaction } = await seedTransaction(t, { apiKey: liveKey, gateway: bkash, status: 'awaiting_verification', amount: '640.00', gatewayTrxId: trxId });
    const [fromTest] = await forwardSms(t, testDevice, [{ sender: 'bKash', body }]);
    expect(fromTest!.match_status).not.toBe('matched');
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
    expect(await t.sql('SELECT event FROM webhook_events WHERE transaction_id = $1', [transaction.id])).toEqual([]);

    // The same SMS text from the live phone is not a duplicate of the test phone's copy: it completes the payment.
    const [fromLive] = await forwardSms(t, liveDevice, [{ sender: 'bKash', body }]);
    expect(fromLive).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    expect((await smsRow(t, fromTest!.id)).match_status).not.toBe('matched');
  });

  it('by amount alone no test SMS is evidence for a live payment either', async () => {
    const { transaction } = await seedTransaction(t, { apiKey: liveKey, gateway: bkash, status: 'pending', amount: '641.00' });
    const [answer] = await forwardSms(t, testDevice, [{ sender: 'bKash', body: smsBodies.bkash('641.00', newGatewayTrxId()) }]);
    expect(answer!.match_status).toBe('no_candidate');
    expect((await smsRow(t, answer!.id)).candidate_ids ?? []).not.toContain(String(transaction.id));
  });

  it('the customer submitting after the SMS arrived: a stored test SMS does not prove a live payment, a stored live one does', async () => {
    const trxId = newGatewayTrxId();
    const [early] = await forwardSms(t, testDevice, [{ sender: 'bKash', body: smsBodies.bkash('642.00', trxId) }]);
    expect(early!.match_status).toBe('no_candidate');
    const live = await createPayment(t, liveKey, { amount: '642.00' });
    const submitted = await t.request('POST', `/api/checkout/v1/payments/${live.payment_id}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: trxId } });
    expect(submitted.status).toBe(201);
    expect(submitted.body.data.status).toBe('awaiting_verification');
    expect((await smsRow(t, early!.id)).match_status).toBe('no_candidate');

    // A test payment submitted after a stored test SMS is proved by it (the same rule within test mode).
    const testTrx = newGatewayTrxId();
    const [stored] = await forwardSms(t, testDevice, [{ sender: 'bKash', body: smsBodies.bkash('643.00', testTrx) }]);
    const test = await createPayment(t, testKey, { amount: '643.00' });
    // The SMS arrived before this payment existed: move the payment back so the SMS lies after it.
    await t.sql("UPDATE payment_intents SET created_at = now() - interval '5 minutes' WHERE uuid = $1", [test.payment_id]);
    const paid = await t.request('POST', `/api/checkout/v1/payments/${test.payment_id}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: testTrx } });
    expect(paid.body.data.status).toBe('completed');
    expect((await smsRow(t, stored!.id)).match_status).toBe('matched');
  });

  it('outbound SMS for any phone of the brand go to live phones only; one addressed to a test phone goes to it', async () => {
    const brand = await t.createBrand('Outbound Modes');
    const live = await pairDevice(t, { brandId: brand.brandId, mode: 'live' });
    const test = await pairDevice(t, { brandId: brand.brandId, mode: 'test' });
    const anyPhone = await adminRequest(t, 'POST', `/brands/${brand.brandId}/outbound-sms`, { phone: '01711111111', message: 'Your order shipped' });
    const toTest = await adminRequest(t, 'POST', `/brands/${brand.brandId}/outbound-sms`, { phone: '01711111112', message: 'Test run', device_id: test.deviceId });
    expect([anyPhone.status, toTest.status]).toEqual([201, 201]);
    const ids = async (d: PairedDevice) => (await deviceRequest(t, d, 'GET', '/sms/queues')).body.data.map((m: { id: number }) => m.id);
    expect(await ids(test)).toEqual([toTest.body.data.id]);
    expect(await ids(live)).toEqual([anyPhone.body.data.id]);
    expect(await t.sql('SELECT mode FROM outbound_sms WHERE id = $1', [toTest.body.data.id])).toEqual([{ mode: 'test' }]);
  });

  it('the device dashboard shows only its own mode', async () => {
    const brand = await t.createBrand('Dashboard Modes');
    const key = (await createApiKey(em(), brand.brandId, { name: 'test', mode: 'test' })).key;
    const live = await pairDevice(t, { brandId: brand.brandId, mode: 'live' });
    const test = await pairDevice(t, { brandId: brand.brandId, mode: 'test' });
    await seedTransaction(t, { apiKey: brand.apiKey, gateway: bkash, amount: '100.00' });
    await seedTransaction(t, { apiKey: key, gateway: bkash, amount: '17.77' });
    const today = async (d: PairedDevice) => (await deviceRequest(t, d, 'GET', '/dashboard')).body.data;
    expect((await today(live)).today).toMatchObject({ revenue: '100.00', total: 1 });
    expect((await today(live)).recent_transactions.map((r: { amount: string }) => r.amount)).toEqual(['100.00']);
    expect((await today(test)).today).toMatchObject({ revenue: '17.77', total: 1 });
  });
});

describe('webhooks per mode', () => {
  it('real events carry livemode; each key lists only its own mode\'s deliveries', async () => {
    const brand = await t.createBrand('Hooked Shop');
    const key = (await createApiKey(em(), brand.brandId, { name: 'test', mode: 'test' })).key;
    const { startReceiver } = await import('../support/webhook-receiver.ts');
    const receiver = await startReceiver();
    try {
      const put = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: brand.apiKey, body: { url: receiver.url, events: ['payment.completed'] } });
      expect(put.status).toBe(201);
      const live = await seedTransaction(t, { apiKey: brand.apiKey, gateway: bkash });
      const test = await seedTransaction(t, { apiKey: key, gateway: bkash });
      await receiver.waitFor((r) => r.length >= 2);
      const bodies = receiver.requests.map((r) => JSON.parse(r.rawBody));
      expect(bodies.find((b) => b.data.trx_id === live.transaction.trxId)).toMatchObject({ event: 'payment.completed', livemode: true });
      expect(bodies.find((b) => b.data.trx_id === test.transaction.trxId)).toMatchObject({ event: 'payment.completed', livemode: false });
      const listed = async (k: string) => (await t.request('GET', '/api/v1/webhooks/deliveries', { token: k })).body.data;
      expect((await listed(brand.apiKey)).map((d: { transaction_id: number; livemode: boolean }) => [d.transaction_id, d.livemode])).toEqual([[live.transaction.id, true]]);
      expect((await listed(key)).map((d: { transaction_id: number; livemode: boolean }) => [d.transaction_id, d.livemode])).toEqual([[test.transaction.id, false]]);
      const liveDelivery = (await listed(brand.apiKey))[0].id;
      expectError(await t.request('GET', `/api/v1/webhooks/deliveries/${liveDelivery}`, { token: key }), 404, 'DELIVERY_NOT_FOUND');
    } finally {
      await receiver.close();
    }
  });
});

describe('admin lists', () => {
  it('show each object\'s mode and filter by it', async () => {
    const rows = async (path: string) => (await adminRequest(t, 'GET', path)).body.data as Array<{ mode: string; brand_id: number }>;
    for (const path of [`/transactions?brand_id=${brandId}`, `/sms-records?brand_id=${brandId}`, `/devices?brand_id=${brandId}`, `/refunds?brand_id=${brandId}`]) {
      const all = await rows(`${path}&per_page=100`);
      const modes = new Set(all.map((r) => r.mode));
      expect(modes, path).toEqual(new Set(['live', 'test']));
      for (const mode of ['live', 'test']) {
        const only = await rows(`${path}&per_page=100&mode=${mode}`);
        expect(only.length, `${path} ${mode}`).toBe(all.filter((r) => r.mode === mode).length);
        expect(only.every((r) => r.mode === mode)).toBe(true);
      }
    }
    const bad = await adminRequest(t, 'GET', '/transactions?mode=sandbox');
    expectError(bad, 400, 'VALIDATION_ERROR', 'mode');
  });

  it('pairing codes carry a mode: a test code pairs a test device', async () => {
    const created = await adminRequest(t, 'POST', `/brands/${brandId}/pairing-codes`, { mode: 'test' });
    expect(created.status).toBe(201);
    expect(created.body.data.mode).toBe('test');
    const paired = await t.request('POST', '/api/mobile/v1/devices/pairings', { token: created.body.data.code, body: { fingerprint: randomBytes(32).toString('hex'), device_name: 'Another test phone' } });
    expect(paired.status).toBe(201);
    expect(await t.sql('SELECT mode FROM devices WHERE uuid = $1', [paired.body.data.device_id])).toEqual([{ mode: 'test' }]);
    expect((await adminRequest(t, 'POST', `/brands/${brandId}/pairing-codes`, {})).body.data.mode).toBe('live');
  });
});

describe('the database keeps modes consistent', () => {
  it('a transaction takes its intent\'s mode whatever the INSERT says, and a mode never changes', async () => {
    const { transaction } = await seedTransaction(t, { apiKey: testKey, gateway: bkash, status: 'pending' });
    expect(await t.sql('SELECT mode FROM transactions WHERE id = $1', [transaction.id])).toEqual([{ mode: 'test' }]);
    await expect(t.sql("UPDATE transactions SET mode = 'live' WHERE id = $1", [transaction.id])).rejects.toThrow(/never changes/);
    await expect(t.sql("UPDATE payment_intents SET mode = 'live' WHERE id = (SELECT intent_id FROM transactions WHERE id = $1)", [transaction.id])).rejects.toThrow(/never changes/);
    const [copy] = await t.sql<{ mode: string }>(
      `INSERT INTO transactions (brand_id, intent_id, trx_id, gateway_id, method, amount, currency, status, mode)
       SELECT brand_id, intent_id, 'TRXMODECHECK0001', gateway_id, method, amount, currency, 'failed', 'live' FROM transactions WHERE id = $1 RETURNING mode`,
      [transaction.id],
    );
    expect(copy!.mode).toBe('test');
  });
});
