import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { contractRoutes } from '../support/contract-walk.ts';
import { changedTables, dbChecksum } from '../support/db-checksum.ts';
import { DEVICE_API, newFingerprint, newPairingCode, pairDevice, type PairedDevice } from '../support/device.ts';
import { createPayment, seedCompletedTransaction, seedGateway, seedTransaction } from '../support/seed.ts';
import { smsBodies } from '../support/sms-matching.ts';

/**
 * The isolation matrix: for every merchant and device route of the contract,
 * brand B's API key and brand B's phone can neither read nor change brand A's
 * data, and the answer for A's data is the answer for data that does not
 * exist. A route added to the contract without a row here fails the first test.
 * (Devices of one brand are kept apart too: device-notifications.security,
 * device-sms-queue.happy; another brand's claim on a gateway trx id:
 * sms-matching.error.)
 */
let t: TestContext;
interface Side {
  brandId: number;
  key: string;
  device: PairedDevice;
}
let A: Side;
let B: Side;
const a = {} as {
  paymentId: string;
  trxId: string;
  gatewayTrxId: string;
  transactionId: number;
  completedPaymentId: string;
  gatewayCode: string;
  deliveryId: number;
  endpointId: number;
  notificationId: number;
  outboundId: number;
  awaiting: { id: number; amount: string; gatewayTrxId: string };
  linkId: string;
  commandId: number;
};
const admin = () => ({ authorization: `Bearer ${t.runtime.deps.secrets.adminToken}` });

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  const brandA = await t.createBrand('Brand A');
  const brandB = await t.createBrand('Brand B');
  A = { brandId: brandA.brandId, key: brandA.apiKey, device: await pairDevice(t, { brandId: brandA.brandId }) };
  B = { brandId: brandB.brandId, key: brandB.apiKey, device: await pairDevice(t, { brandId: brandB.brandId }) };

  const hook = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: A.key, body: { url: 'http://127.0.0.1:9/a-hook', events: ['payment.completed', 'refund.completed'] } });
  expect(hook.status).toBe(201);
  a.endpointId = hook.body.data.id;
  const gateway = await seedGateway(t, 'bkash');
  a.paymentId = (await createPayment(t, A.key, { customer: { name: 'Alice', email: 'alice@example.com', phone: '+8801711111111' } })).payment_id;
  const { transaction, paymentId: paymentIdOfCompleted } = await seedCompletedTransaction(t, { apiKey: A.key, gateway, amount: '500.00', customer: { email: 'alice@example.com' } });
  Object.assign(a, { trxId: transaction.trxId, gatewayTrxId: transaction.gatewayTrxId, transactionId: transaction.id, completedPaymentId: paymentIdOfCompleted, gatewayCode: gateway.code });
  expect((await t.request('POST', '/api/v1/refunds', { token: A.key, body: { trx_id: a.trxId, amount: '10.00' } })).status).toBe(201);
  const [delivery] = await t.sql<{ id: string }>('SELECT id FROM webhook_deliveries WHERE brand_id = $1 LIMIT 1', [A.brandId]);
  a.deliveryId = Number(delivery!.id);
  const awaiting = await seedTransaction(t, { apiKey: A.key, gateway, status: 'awaiting_verification', amount: '777.00', gatewayTrxId: 'BISO123456' });
  a.awaiting = { id: awaiting.transaction.id, amount: '777.00', gatewayTrxId: 'BISO123456' };

  const note = await t.request('POST', `/api/admin/v1/devices/${A.device.deviceId}/notifications`, { headers: admin(), body: { title: 'For A', body: 'Only A' } });
  a.notificationId = note.body.data.id;
  const sms = await t.request('POST', `/api/admin/v1/brands/${A.brandId}/outbound-sms`, { headers: admin(), body: { phone: '+8801711111111', message: 'For A only' } });
  a.outboundId = sms.body.data.id;
  expect((await t.request('PATCH', `/api/admin/v1/brands/${A.brandId}/filter-rules`, { headers: admin(), body: { extra_senders: ['AONLYSENDER'] } })).status).toBe(200);
  const link = await t.request('POST', '/api/v1/payment-links', { token: A.key, body: { amount: '250.00', currency: 'BDT', reference: 'A-LINK' } });
  expect(link.status).toBe(201);
  a.linkId = link.body.data.id;
  const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
  const backfill = await t.request('POST', `/api/admin/v1/devices/${A.device.deviceId}/backfill-requests`, { headers: admin(), body: { from: hourAgo, to: new Date().toISOString() } });
  expect(backfill.status).toBe(201);
  a.commandId = backfill.body.data.id;
});
afterAll(() => t?.close());

const asB = (method: string, path: string, body?: unknown) => t.request(method, path, { token: B.key, ...(body === undefined ? {} : { body }) });
const asBDevice = (method: string, path: string, body?: unknown) => t.request(method, `${DEVICE_API}${path}`, { token: B.device.accessToken, ...(body === undefined ? {} : { body }) });

/** Same status and same error items: nothing tells A's data apart from none at all. */
function sameAnswer(forA: { status: number; body: any }, forMissing: { status: number; body: any }) {
  expect(forA.status).toBe(forMissing.status);
  expect(forA.status).toBeGreaterThanOrEqual(400);
  expect(forA.body.errors).toEqual(forMissing.body.errors);
}

async function unchanged(action: () => Promise<unknown>) {
  const before = await dbChecksum(t);
  await action();
  expect(changedTables(before, await dbChecksum(t))).toEqual([]);
}

/** A draft invoice of brand A (made once). */
const invoiceBody = { currency: 'BDT', due_date: '2099-01-01', lines: [{ description: "A's work", quantity: '1', unit_price: '10.00' }] };
let aInvoice: string | undefined;
async function invoiceOfA(): Promise<string> {
  if (aInvoice) return aInvoice;
  const res = await t.request('POST', '/api/v1/invoices', { token: A.key, body: { ...invoiceBody, customer: { email: 'alice@example.com' } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  aInvoice = res.body.data.id as string;
  return aInvoice;
}

const checks: Record<string, () => Promise<void>> = {
  'merchant.brand.get': async () => {
    const res = await asB('GET', '/api/v1/brand');
    expect(res.body.data.id).toBe(B.brandId);
  },
  'merchant.payments.create': async () => {
    const body = { amount: '10.00', currency: 'BDT', reference: 'same-ref' };
    const first = await t.request('POST', '/api/v1/payments', { token: A.key, body, headers: { 'idempotency-key': 'shared-key' } });
    const second = await t.request('POST', '/api/v1/payments', { token: B.key, body, headers: { 'idempotency-key': 'shared-key' } });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data.payment_id).not.toBe(first.body.data.payment_id);
    const [row] = await t.sql<{ brand_id: string }>('SELECT brand_id FROM payment_intents WHERE uuid = $1', [second.body.data.payment_id]);
    expect(Number(row!.brand_id)).toBe(B.brandId);
  },
  'merchant.payments.get': async () => {
    expect((await t.request('GET', `/api/v1/payments/${a.paymentId}`, { token: A.key })).status).toBe(200);
    sameAnswer(await asB('GET', `/api/v1/payments/${a.paymentId}`), await asB('GET', `/api/v1/payments/${randomUUID()}`));
  },
  'merchant.payments.list': async () => {
    for (const q of ['', '?customer_email=alice@example.com', '?customer_phone=%2B8801711111111', `?gateway=${a.gatewayCode}`, '?status=completed']) {
      const res = await asB('GET', `/api/v1/payments${q}`);
      expect(res.status).toBe(200);
      expect(res.body.data.filter((p: { reference: string | null }) => p.reference !== 'same-ref')).toEqual([]);
      expect(JSON.stringify(res.body)).not.toMatch(/Alice|a\*\*\*/);
    }
    expect((await t.request('GET', '/api/v1/payments?customer_email=alice@example.com', { token: A.key })).body.meta.total).toBe(2);
  },
  'merchant.payments.cancel': async () => {
    await unchanged(async () => {
      sameAnswer(await asB('POST', `/api/v1/payments/${a.paymentId}/cancel`), await asB('POST', `/api/v1/payments/${randomUUID()}/cancel`));
    });
  },
  'merchant.refunds.create': async () => {
    await unchanged(async () => {
      sameAnswer(await asB('POST', '/api/v1/refunds', { payment_id: a.completedPaymentId, amount: '1.00' }), await asB('POST', '/api/v1/refunds', { payment_id: randomUUID(), amount: '1.00' }));
      sameAnswer(await asB('POST', '/api/v1/refunds', { trx_id: a.trxId, amount: '1.00' }), await asB('POST', '/api/v1/refunds', { trx_id: 'TRX-NOPE-0001', amount: '1.00' }));
      sameAnswer(await asB('POST', '/api/v1/refunds', { trx_id: a.gatewayTrxId, amount: '1.00' }), await asB('POST', '/api/v1/refunds', { trx_id: 'TRX-NOPE-0001', amount: '1.00' }));
    });
  },
  'merchant.refunds.list': async () => {
    for (const q of ['', `?trx_id=${a.trxId}`, `?trx_id=${a.gatewayTrxId}`, `?transaction_id=${a.transactionId}`]) {
      const res = await asB('GET', `/api/v1/refunds${q}`);
      expect(res.status).toBe(200);
      expect(res.body.meta.total).toBe(0);
      expect(res.body.data).toEqual([]);
    }
    expect((await t.request('GET', '/api/v1/refunds', { token: A.key })).body.meta.total).toBe(1);
  },
  'merchant.refunds.get': async () => {
    sameAnswer(await asB('GET', `/api/v1/refunds/${a.trxId}`), await asB('GET', '/api/v1/refunds/TRX-NOPE-0001'));
    sameAnswer(await asB('GET', `/api/v1/refunds/${a.gatewayTrxId}`), await asB('GET', '/api/v1/refunds/TRX-NOPE-0001'));
  },
  'merchant.customers.list': async () => {
    const res = await asB('GET', '/api/v1/customers');
    expect(res.body.meta.total).toBe(0);
    expect(JSON.stringify(res.body)).not.toMatch(/Alice|a\*\*\*/);
  },
  'merchant.customers.get': async () => {
    sameAnswer(await asB('GET', '/api/v1/customers/alice%40example.com'), await asB('GET', '/api/v1/customers/nobody%40example.com'));
    sameAnswer(await asB('GET', '/api/v1/customers/%2B8801711111111'), await asB('GET', '/api/v1/customers/%2B8801799999999'));
  },
  'merchant.customers.create': async () => {
    // Uniqueness is per brand: A's customer does not block B's, and B's create tells nothing about A.
    const made = await asB('POST', '/api/v1/customers', { email: 'alice@example.com' });
    expect(made.status).toBe(201);
    const [row] = await t.sql<{ brand_id: string }>('SELECT brand_id FROM customers WHERE uuid = $1', [made.body.data.uuid]);
    expect(Number(row!.brand_id)).toBe(B.brandId);
    expect((await asB('DELETE', `/api/v1/customers/${made.body.data.uuid}`)).status).toBe(204);
  },
  'merchant.customers.update': async () => {
    const [alice] = await t.sql<{ uuid: string }>('SELECT uuid FROM customers WHERE brand_id = $1 AND erased_at IS NULL', [A.brandId]);
    await unchanged(async () => {
      sameAnswer(await asB('PATCH', `/api/v1/customers/${alice!.uuid}`, { name: 'Mallory' }), await asB('PATCH', `/api/v1/customers/${randomUUID()}`, { name: 'Mallory' }));
    });
  },
  'merchant.customers.delete': async () => {
    const [alice] = await t.sql<{ uuid: string }>('SELECT uuid FROM customers WHERE brand_id = $1 AND erased_at IS NULL', [A.brandId]);
    await unchanged(async () => {
      sameAnswer(await asB('DELETE', `/api/v1/customers/${alice!.uuid}`), await asB('DELETE', `/api/v1/customers/${randomUUID()}`));
    });
  },
  'merchant.invoices.create': async () => {
    // B invoicing the same e-mail as A's customer makes B's own customer and B's own first number.
    const made = await asB('POST', '/api/v1/invoices', { ...invoiceBody, lines: [{ description: "B's work", quantity: '1', unit_price: '10.00' }], customer: { email: 'alice@example.com' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.data.number).toBe('INV-0001');
    const [row] = await t.sql<{ brand_id: string }>('SELECT brand_id FROM invoices WHERE uuid = $1', [made.body.data.id]);
    expect(Number(row!.brand_id)).toBe(B.brandId);
  },
  'merchant.invoices.list': async () => {
    const aId = await invoiceOfA();
    const res = await asB('GET', '/api/v1/invoices');
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: { id: string }) => i.id)).not.toContain(aId);
    expect(JSON.stringify(res.body)).not.toMatch(/A's work/);
  },
  'merchant.invoices.get': async () => {
    sameAnswer(await asB('GET', `/api/v1/invoices/${await invoiceOfA()}`), await asB('GET', `/api/v1/invoices/${randomUUID()}`));
  },
  'merchant.invoices.update': async () => {
    const id = await invoiceOfA();
    await unchanged(async () => {
      sameAnswer(await asB('PATCH', `/api/v1/invoices/${id}`, { memo: 'Mallory' }), await asB('PATCH', `/api/v1/invoices/${randomUUID()}`, { memo: 'Mallory' }));
    });
  },
  'merchant.invoices.finalize': async () => {
    const id = await invoiceOfA();
    await unchanged(async () => {
      sameAnswer(await asB('POST', `/api/v1/invoices/${id}/finalize`), await asB('POST', `/api/v1/invoices/${randomUUID()}/finalize`));
    });
  },
  'merchant.invoices.void': async () => {
    const id = await invoiceOfA();
    await unchanged(async () => {
      sameAnswer(await asB('POST', `/api/v1/invoices/${id}/void`), await asB('POST', `/api/v1/invoices/${randomUUID()}/void`));
    });
  },
  'merchant.invoices.send': async () => {
    const id = await invoiceOfA();
    await unchanged(async () => {
      sameAnswer(await asB('POST', `/api/v1/invoices/${id}/send`), await asB('POST', `/api/v1/invoices/${randomUUID()}/send`));
    });
  },
  'merchant.webhooks.getEndpoint': async () => {
    const res = await asB('GET', '/api/v1/webhooks/endpoint');
    expect(res.status).toBe(404);
    expect(res.body.errors[0].code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
  },
  'merchant.webhooks.putEndpoint': async () => {
    const before = await t.sql('SELECT url, events, secret_encrypted FROM webhook_endpoints WHERE brand_id = $1', [A.brandId]);
    expect([200, 201]).toContain((await asB('PUT', '/api/v1/webhooks/endpoint', { url: 'http://127.0.0.1:9/b-hook', events: ['payment.completed'] })).status);
    expect(await t.sql('SELECT url, events, secret_encrypted FROM webhook_endpoints WHERE brand_id = $1', [A.brandId])).toEqual(before);
  },
  'merchant.webhooks.rotateSecret': async () => {
    await asB('PUT', '/api/v1/webhooks/endpoint', { url: 'http://127.0.0.1:9/b-hook', events: ['payment.completed'] });
    const before = await t.sql('SELECT secret_encrypted, previous_secrets FROM webhook_endpoints WHERE brand_id = $1', [A.brandId]);
    expect((await asB('POST', '/api/v1/webhooks/endpoint/secret-rotations')).status).toBe(201);
    expect(await t.sql('SELECT secret_encrypted, previous_secrets FROM webhook_endpoints WHERE brand_id = $1', [A.brandId])).toEqual(before);
  },
  'merchant.webhooks.listDeliveries': async () => {
    const res = await asB('GET', '/api/v1/webhooks/deliveries');
    expect(res.status).toBe(200);
    expect(res.body.data.map((d: { id: number }) => d.id)).not.toContain(a.deliveryId);
  },
  'merchant.webhooks.sendTest': async () => {
    await asB('PUT', '/api/v1/webhooks/endpoint', { url: 'http://127.0.0.1:9/b-hook', events: ['payment.completed'] });
    const before = await t.sql('SELECT id FROM webhook_events WHERE brand_id = $1', [A.brandId]);
    const res = await asB('POST', '/api/v1/webhooks/tests', { event: 'payment.completed' });
    expect(res.status).toBe(201);
    expect(res.body.data.url).toBe('http://127.0.0.1:9/b-hook');
    expect(await t.sql('SELECT id FROM webhook_events WHERE brand_id = $1', [A.brandId])).toEqual(before);
  },
  'merchant.webhooks.getDelivery': async () => {
    sameAnswer(await asB('GET', `/api/v1/webhooks/deliveries/${a.deliveryId}`), await asB('GET', '/api/v1/webhooks/deliveries/999999999'));
  },
  'merchant.webhookEndpoints.list': async () => {
    const res = await asB('GET', '/api/v1/webhooks/endpoints');
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { id: number }) => e.id)).not.toContain(a.endpointId);
  },
  'merchant.webhookEndpoints.create': async () => {
    const before = await t.sql('SELECT * FROM webhook_endpoints WHERE brand_id = $1', [A.brandId]);
    const res = await asB('POST', '/api/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/b-extra', events: ['payment.completed'] });
    expect(res.status).toBe(201);
    const [row] = await t.sql<{ brand_id: string }>('SELECT brand_id FROM webhook_endpoints WHERE id = $1', [res.body.data.id]);
    expect(Number(row!.brand_id)).toBe(B.brandId);
    expect(await t.sql('SELECT * FROM webhook_endpoints WHERE brand_id = $1', [A.brandId])).toEqual(before);
  },
  'merchant.webhookEndpoints.get': async () => {
    sameAnswer(await asB('GET', `/api/v1/webhooks/endpoints/${a.endpointId}`), await asB('GET', '/api/v1/webhooks/endpoints/999999999'));
  },
  'merchant.webhookEndpoints.update': async () => {
    await unchanged(async () => {
      const patch = { url: 'http://127.0.0.1:9/stolen', enabled: false };
      sameAnswer(await asB('PATCH', `/api/v1/webhooks/endpoints/${a.endpointId}`, patch), await asB('PATCH', '/api/v1/webhooks/endpoints/999999999', patch));
    });
  },
  'merchant.webhookEndpoints.delete': async () => {
    await unchanged(async () => {
      sameAnswer(await asB('DELETE', `/api/v1/webhooks/endpoints/${a.endpointId}`), await asB('DELETE', '/api/v1/webhooks/endpoints/999999999'));
    });
  },
  'merchant.webhookEndpoints.rotateSecret': async () => {
    await unchanged(async () => {
      sameAnswer(await asB('POST', `/api/v1/webhooks/endpoints/${a.endpointId}/secret-rotations`), await asB('POST', '/api/v1/webhooks/endpoints/999999999/secret-rotations'));
    });
  },
  'merchant.webhookEndpoints.sendTest': async () => {
    await unchanged(async () => {
      const body = { event: 'payment.completed' };
      sameAnswer(await asB('POST', `/api/v1/webhooks/endpoints/${a.endpointId}/tests`, body), await asB('POST', '/api/v1/webhooks/endpoints/999999999/tests', body));
    });
  },
  'merchant.events.list': async () => {
    const mine = await t.sql<{ public_id: string }>('SELECT public_id FROM webhook_events WHERE brand_id = $1', [A.brandId]);
    expect(mine.length).toBeGreaterThan(0);
    for (const query of ['', '?after=0&limit=100']) {
      const res = await asB('GET', `/api/v1/events${query}`);
      expect(res.status).toBe(200);
      const seen = res.body.data.map((e: { id: string }) => e.id);
      expect(seen.filter((id: string) => mine.some((m) => m.public_id === id))).toEqual([]);
    }
  },
  'merchant.paymentLinks.create': async () => {
    const res = await asB('POST', '/api/v1/payment-links', { amount: '250.00', currency: 'BDT', reference: 'B-LINK' });
    expect(res.status).toBe(201);
    const [row] = await t.sql<{ brand_id: string }>('SELECT brand_id FROM payment_links WHERE public_id = $1', [res.body.data.id]);
    expect(Number(row!.brand_id)).toBe(B.brandId);
  },
  'merchant.paymentLinks.list': async () => {
    const res = await asB('GET', '/api/v1/payment-links');
    expect(res.status).toBe(200);
    expect(res.body.data.map((l: { id: string }) => l.id)).not.toContain(a.linkId);
    expect(JSON.stringify(res.body)).not.toContain('A-LINK');
  },
  'merchant.paymentLinks.get': async () => {
    expect((await t.request('GET', `/api/v1/payment-links/${a.linkId}`, { token: A.key })).status).toBe(200);
    sameAnswer(await asB('GET', `/api/v1/payment-links/${a.linkId}`), await asB('GET', `/api/v1/payment-links/plink_${'0'.repeat(24)}`));
  },
  'merchant.paymentLinks.deactivate': async () => {
    await unchanged(async () => {
      sameAnswer(await asB('POST', `/api/v1/payment-links/${a.linkId}/deactivate`), await asB('POST', `/api/v1/payment-links/plink_${'0'.repeat(24)}/deactivate`));
    });
  },
  'device.commands.list': async () => {
    const res = await asBDevice('GET', '/commands');
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { id: number }) => c.id)).not.toContain(a.commandId);
    const mine = await t.request('GET', `${DEVICE_API}/commands`, { token: A.device.accessToken });
    expect(mine.body.data.map((c: { id: number }) => c.id)).toContain(a.commandId);
  },
  'device.commands.complete': async () => {
    await unchanged(async () => {
      sameAnswer(await asBDevice('POST', `/commands/${a.commandId}/complete`, { resent_count: 0 }), await asBDevice('POST', '/commands/999999999/complete', { resent_count: 0 }));
    });
  },
  'device.devices.pair': async () => {
    const res = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: await newPairingCode(t, B.brandId), body: { fingerprint: newFingerprint(), device_name: 'B phone' } });
    const [row] = await t.sql<{ brand_id: string }>('SELECT brand_id FROM devices WHERE uuid = $1', [res.body.data.device_id]);
    expect(Number(row!.brand_id)).toBe(B.brandId);
  },
  'device.devices.refreshTokens': async () => {
    const stolen = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: A.device.refreshToken, fingerprint: B.device.fingerprint } });
    const garbage = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: 'not.a.token', fingerprint: B.device.fingerprint } });
    sameAnswer(stolen, garbage);
    expect((await t.request('GET', `${DEVICE_API}/dashboard`, { token: A.device.accessToken })).status).toBe(200);
  },
  'device.devices.heartbeat': async () => {
    const before = await t.sql('SELECT last_heartbeat_at, battery_level FROM devices WHERE id = $1', [A.device.deviceId]);
    expect((await asBDevice('POST', '/devices/heartbeats', { battery_level: 5 })).status).toBe(200);
    expect(await t.sql('SELECT last_heartbeat_at, battery_level FROM devices WHERE id = $1', [A.device.deviceId])).toEqual(before);
  },
  'device.dashboard.get': async () => {
    const res = await asBDevice('GET', '/dashboard');
    expect(res.body.data.today.total).toBe(0);
    expect(res.body.data.recent_transactions).toEqual([]);
  },
  'device.filterRules.get': async () => {
    const res = await asBDevice('GET', '/config/filter-rules');
    expect(res.status).toBe(200);
    expect(res.body.data.allowed_senders).not.toContain('AONLYSENDER');
  },
  'device.notifications.listUnread': async () => {
    expect((await asBDevice('GET', '/notifications')).body.data).toEqual([]);
  },
  'device.notifications.acknowledge': async () => {
    const forA = await asBDevice('POST', '/notifications/acknowledgements', { ids: [a.notificationId] });
    const forNone = await asBDevice('POST', '/notifications/acknowledgements', { ids: [999999999] });
    expect(forA.body).toEqual(forNone.body);
    expect(forA.body.data.acknowledged).toBe(0);
    const mine = await t.request('GET', `${DEVICE_API}/notifications`, { token: A.device.accessToken });
    expect(mine.body.data.map((n: { id: number }) => n.id)).toContain(a.notificationId);
  },
  'device.smsQueue.lease': async () => {
    expect((await asBDevice('GET', '/sms/queues')).body.data).toEqual([]);
    const [row] = await t.sql<{ status: string }>('SELECT status FROM outbound_sms WHERE id = $1', [a.outboundId]);
    expect(row!.status).toBe('pending');
  },
  'device.smsQueue.report': async () => {
    const leased = await t.request('GET', `${DEVICE_API}/sms/queues`, { token: A.device.accessToken });
    expect(leased.body.data.map((i: { id: number }) => i.id)).toContain(a.outboundId);
    await unchanged(async () => {
      sameAnswer(await asBDevice('POST', `/sms/queues/${a.outboundId}/reports`, { status: 'sent' }), await asBDevice('POST', '/sms/queues/999999999/reports', { status: 'sent' }));
    });
  },
  'device.smsMessages.forward': async () => {
    const res = await asBDevice('POST', '/sms/messages', {
      messages: [{ device_message_id: 'b-1', sender: 'bKash', body: smsBodies.bkash(a.awaiting.amount, a.awaiting.gatewayTrxId), received_at: new Date().toISOString() }],
    });
    expect(res.status).toBe(200);
    expect(res.body.data[0].match_status).not.toBe('matched');
    expect(res.body.data[0].trx_id).toBeNull();
    const [tx] = await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [a.awaiting.id]);
    expect(tx!.status).toBe('awaiting_verification');
    expect(await t.sql("SELECT 1 FROM webhook_events WHERE transaction_id = $1 AND event = 'payment.completed'", [a.awaiting.id])).toEqual([]);
  },
};

describe('isolation matrix', () => {
  it('has a row for every merchant and device route in the contract', () => {
    const scoped = contractRoutes().filter((r) => ['merchant', 'device', 'pairing', 'device-refresh'].includes(r.meta.auth));
    expect(scoped.length).toBeGreaterThan(20);
    expect(scoped.map((r) => r.name).filter((n) => !(n in checks))).toEqual([]);
    expect(Object.keys(checks).filter((n) => !scoped.some((r) => r.name === n))).toEqual([]);
  });

  it.each(Object.entries(checks))("%s: brand B cannot read or change brand A's data", async (_name, check) => {
    await check();
  });
});
