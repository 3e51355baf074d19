import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaycollectMerchant } from '../../clients/merchant/index.ts';
import { constructEvent } from '../../clients/shared/webhook-verify.ts';
import { webhookEventSchemas } from '../../contract/events.ts';
import { webhookEventNames } from '../../contract/vocabulary.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import { sampleEventData } from '../../server/domain/webhooks/test-events.ts';
import type { TestContext } from '../support/harness.ts';
import { startReceiver, verifyingResponder, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import { adminRequest, runCli } from './admin-support.ts';

/** POST /api/v1/webhooks/tests and `npm run cli -- webhooks:test`: a signed sample event, delivered and logged, nothing else changed. */

let server: WebhookTestServer;
let t: TestContext;
let receiver: WebhookReceiver;
let brandId: number;
let liveKey: string;
let testKey: string;
let secret: string;

beforeAll(async () => {
  server = await startWebhookTestServer();
  t = server.t;
  receiver = await startReceiver();
  ({ brandId, apiKey: liveKey } = await t.createBrand('Hook Tester'));
  testKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'test', mode: 'test' })).key;
  // Subscribed to one event only: a test event is sent whatever the subscription.
  const put = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: liveKey, body: { url: receiver.url, events: ['refund.failed'] } });
  expect(put.status).toBe(201);
  secret = put.body.data.secret;
  receiver.respond = verifyingResponder(() => secret);
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const tables = ['payment_intents', 'transactions', 'refunds', 'customers', 'devices', 'sms_records'];
const counts = async () => Object.fromEntries(await Promise.all(tables.map(async (tb) => [tb, (await t.sql<{ n: string }>(`SELECT count(*) AS n FROM ${tb}`))[0]!.n])));

describe('sample data', () => {
  it.each(webhookEventNames)('%s: a realistic body valid against the event schema', (event) => {
    const data = sampleEventData(event);
    const body = { id: 'evt_x', event, created_at: new Date().toISOString(), livemode: false, data };
    expect(webhookEventSchemas[event].safeParse(body).success).toBe(true);
  });
});

describe('POST /api/v1/webhooks/tests', () => {
  it('sends a signed test event of every type with livemode of the key, logs the delivery, changes nothing else', async () => {
    const before = await counts();
    const client = new PaycollectMerchant({ apiKey: testKey, baseUrl: t.baseUrl });
    for (const event of webhookEventNames) {
      const delivery = await client.webhooks.sendTest({ event });
      expect(delivery).toMatchObject({ event, url: receiver.url, status: 'pending', attempts: 0, livemode: false, test: true, transaction_id: null });
      await receiver.waitFor((reqs) => reqs.some((r) => r.headers['x-webhook-id'] === delivery.event_id));
      const req = receiver.requests.find((r) => r.headers['x-webhook-id'] === delivery.event_id)!;
      expect(req.status).toBe(200);
      const verified = constructEvent(req.rawBody, req.headers as Record<string, string>, secret);
      expect(verified).toMatchObject({ id: delivery.event_id, event, livemode: false, test: true });
      expect(req.headers['x-webhook-event']).toBe(event);
      // Marked as a sample in the headers too, before the body is parsed.
      expect(req.headers['x-webhook-test']).toBe('true');
      expect(req.rawBody).toBe(delivery.payload);
      const logged = await eventually(async () => {
        const list = await t.request('GET', '/api/v1/webhooks/deliveries', { token: testKey });
        const found = list.body.data.find((d: { id: number }) => d.id === delivery.id);
        return found?.status === 'success' ? found : null;
      });
      expect(logged).toMatchObject({ attempts: 1, response_status: 200, test: true, livemode: false });
    }
    expect(await counts()).toEqual(before);
    // The live key neither lists nor opens the test key's test deliveries.
    const liveList = await t.request('GET', '/api/v1/webhooks/deliveries', { token: liveKey });
    expect(liveList.body.data.filter((d: { test: boolean }) => d.test)).toEqual([]);
  });

  it('with a live key the body says livemode true', async () => {
    const res = await t.request('POST', '/api/v1/webhooks/tests', { token: liveKey, body: { event: 'payment.completed' } });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body.data.payload)).toMatchObject({ event: 'payment.completed', livemode: true, data: { status: 'completed', amount: '500.00' } });
    await receiver.waitFor((reqs) => reqs.some((r) => r.headers['x-webhook-id'] === res.body.data.event_id));
  });

  it('refuses an unknown event (400 naming it), no endpoint (WEBHOOK_ENDPOINT_NOT_FOUND) and a disabled one (INVALID_STATE)', async () => {
    const bad = await t.request('POST', '/api/v1/webhooks/tests', { token: testKey, body: { event: 'payment.refunded' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'event' });

    const other = await t.createBrand('No Endpoint');
    const none = await t.request('POST', '/api/v1/webhooks/tests', { token: other.apiKey, body: { event: 'payment.completed' } });
    expect(none.status).toBe(404);
    expect(none.body.errors[0]).toMatchObject({ code: 'WEBHOOK_ENDPOINT_NOT_FOUND' });

    const off = await t.createBrand('Endpoint Off');
    await t.request('PUT', '/api/v1/webhooks/endpoint', { token: off.apiKey, body: { url: receiver.url, events: ['payment.completed'], enabled: false } });
    const disabled = await t.request('POST', '/api/v1/webhooks/tests', { token: off.apiKey, body: { event: 'payment.completed' } });
    expect(disabled.status).toBe(409);
    expect(disabled.body.errors[0]).toMatchObject({ code: 'INVALID_STATE' });
    expect(await t.sql('SELECT id FROM webhook_events WHERE brand_id = ANY($1::bigint[])', [[other.brandId, off.brandId]])).toEqual([]);
  });
});

describe('admin and CLI', () => {
  it('the admin route sends one (test mode by default) and audits it', async () => {
    const res = await adminRequest(t, 'POST', '/webhook-tests', { brand_id: brandId, event: 'device.offline' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ brand_id: brandId, event: 'device.offline', mode: 'test', livemode: false, test: true });
    await receiver.waitFor((reqs) => reqs.some((r) => r.headers['x-webhook-id'] === res.body.data.event_id));
    const audit = await t.sql<{ target_id: string }>("SELECT target_id FROM audit_log WHERE action = 'webhook.test_event'");
    expect(audit.map((a) => Number(a.target_id))).toContain(res.body.data.id);
    const none = await adminRequest(t, 'POST', '/webhook-tests', { brand_id: 999999, event: 'device.offline' });
    expect(none.status).toBe(404);
    expect(none.body.errors[0].code).toBe('BRAND_NOT_FOUND');
  });

  it('npm run cli -- webhooks:test --brand … --event … does the same', async () => {
    const sent = await runCli(t, ['webhooks:test', '--brand', String(brandId), '--event', 'refund.completed', '--mode', 'live', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    const delivery = sent.json();
    expect(delivery).toMatchObject({ brand_id: brandId, event: 'refund.completed', mode: 'live', livemode: true, test: true });
    await receiver.waitFor((reqs) => reqs.some((r) => r.headers['x-webhook-id'] === delivery.event_id));
    const req = receiver.requests.find((r) => r.headers['x-webhook-id'] === delivery.event_id)!;
    expect(constructEvent(req.rawBody, req.headers as Record<string, string>, secret)).toMatchObject({ event: 'refund.completed', livemode: true });
    const bad = await runCli(t, ['webhooks:test', '--brand', String(brandId), '--event', 'payment.refunded']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('--event must be one of');
  });
});
