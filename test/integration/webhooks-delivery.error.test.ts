import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually, waitForQueuesDrained } from '../support/wait.ts';
import { DELIVER_QUEUE } from '../../server/domain/webhooks/queue.ts';
import { attemptsOf, deliveriesOf, emitPaymentCompleted, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';

let server: WebhookTestServer;
let t: TestContext;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  server = await startWebhookTestServer();
  t = server.t;
});
afterAll(async () => {
  await server?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

/** A brand of its own with an endpoint on a receiver of its own: tests do not see each other's traffic. */
async function brandWithReceiver(respond: WebhookReceiver['respond'], url?: (r: WebhookReceiver) => string) {
  const receiver = await startReceiver(respond);
  receivers.push(receiver);
  const { brandId, apiKey } = await t.createBrand();
  const res = await t.request('PUT', '/api/v1/webhooks/endpoint', {
    token: apiKey,
    body: { url: url ? url(receiver) : receiver.url, events: ['payment.completed'] },
  });
  expect(res.status).toBe(201);
  return { receiver, brandId, apiKey };
}

async function settle(brandId: number) {
  return eventually(async () => {
    const rows = await deliveriesOf(t, brandId);
    return rows.length > 0 && rows.every((r) => r.status === 'success' || r.status === 'dead_letter') ? rows : null;
  }, 25_000, 'deliveries settled');
}

describe('failed deliveries', () => {
  it('always 500: dead_letter after the configured 4 attempts, each logged, with growing waits between them', async () => {
    const { receiver, brandId } = await brandWithReceiver(() => ({ status: 500, body: 'internal' }));
    await emitPaymentCompleted(t, brandId, 1);
    const [delivery] = await settle(brandId);
    expect(delivery).toMatchObject({ status: 'dead_letter', attempts: 4, response_status: 500, last_error: 'receiver answered 500' });
    expect(receiver.requests.map((r) => r.headers['x-webhook-attempt'])).toEqual(['1', '2', '3', '4']);
    // base 0.3 s ×4 per attempt, capped at 1 s, equal jitter: each wait is at least half its ceiling.
    const gaps = receiver.requests.slice(1).map((r, i) => r.at - receiver.requests[i]!.at);
    const floors = [150, 500, 500];
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(floors[i]! - 20));
    const attempts = await attemptsOf(t, delivery!.id);
    expect(attempts.map((a) => [a.attempt, a.outcome, a.response_status, a.error])).toEqual([
      [1, 'failure', 500, 'receiver answered 500'],
      [2, 'failure', 500, 'receiver answered 500'],
      [3, 'failure', 500, 'receiver answered 500'],
      [4, 'failure', 500, 'receiver answered 500'],
    ]);
    expect(attempts.map((a) => a.next_attempt_at === null)).toEqual([false, false, false, true]);
    await waitForQueuesDrained(t, [DELIVER_QUEUE]);
    expect(receiver.requests).toHaveLength(4);
  });

  it('a receiver slower than the timeout is a failed attempt (timeout), then retried', async () => {
    const { receiver, brandId } = await brandWithReceiver((req) => (req.n === 1 ? { status: 200, delayMs: 2500 } : { status: 200 }));
    await emitPaymentCompleted(t, brandId, 2);
    const [delivery] = await settle(brandId);
    expect(delivery).toMatchObject({ status: 'success', attempts: 2 });
    const attempts = await attemptsOf(t, delivery!.id);
    expect(attempts[0]).toMatchObject({ outcome: 'failure', response_status: null, error_kind: 'timeout', error: 'timeout: no response within 1000 ms' });
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(990);
    expect(attempts[0]!.duration_ms).toBeLessThan(2000);
    expect(attempts[1]).toMatchObject({ outcome: 'success', response_status: 200 });
    expect(receiver.requests).toHaveLength(2);
  });

  it('a 301 is a failure and the Location is never followed', async () => {
    const elsewhere = await startReceiver();
    receivers.push(elsewhere);
    const { receiver, brandId } = await brandWithReceiver((req) =>
      req.n === 1 ? { status: 301, headers: { location: elsewhere.url } } : { status: 204 },
    );
    await emitPaymentCompleted(t, brandId, 3);
    const [delivery] = await settle(brandId);
    expect(delivery).toMatchObject({ status: 'success', attempts: 2, response_status: 204 });
    const attempts = await attemptsOf(t, delivery!.id);
    expect(attempts[0]).toMatchObject({ outcome: 'failure', response_status: 301, error_kind: 'redirect' });
    expect(attempts[0]!.error).toContain(`answered 301 (redirects are not followed); location: ${elsewhere.url}`);
    expect(receiver.requests).toHaveLength(2);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('honours Retry-After on 503 as a floor under the backoff', async () => {
    const { receiver, brandId } = await brandWithReceiver((req) => (req.n === 1 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 }));
    await emitPaymentCompleted(t, brandId, 4);
    const [delivery] = await settle(brandId);
    expect(delivery).toMatchObject({ status: 'success', attempts: 2 });
    // Without the header the retry would come within 0.3 s plus a poll.
    expect(receiver.requests[1]!.at - receiver.requests[0]!.at).toBeGreaterThanOrEqual(1990);
  });

  it('410 Gone: dead letter at once and the endpoint is disabled; later events are kept but not delivered', async () => {
    const { receiver, brandId, apiKey } = await brandWithReceiver(() => ({ status: 410, body: 'gone' }));
    await emitPaymentCompleted(t, brandId, 5);
    const [delivery] = await settle(brandId);
    expect(delivery).toMatchObject({ status: 'dead_letter', attempts: 1, response_status: 410 });
    const ep = await t.request('GET', '/api/v1/webhooks/endpoint', { token: apiKey });
    expect(ep.body.data).toMatchObject({ enabled: false, disabled_reason: 'gone', disabled_at: expect.stringMatching(/Z$/) });
    await emitPaymentCompleted(t, brandId, 6);
    expect(await t.sql('SELECT count(*)::int AS n FROM webhook_events WHERE brand_id = $1', [brandId])).toEqual([{ n: 2 }]);
    expect(await deliveriesOf(t, brandId)).toHaveLength(1);
    expect(receiver.requests).toHaveLength(1);
    // The operators hear of it once, without the endpoint's URL (it can carry the merchant's tokens).
    const alerts = await t.sql<{ type: string; details: Record<string, unknown>; subject: string }>('SELECT type, details, subject FROM alerts WHERE brand_id = $1', [brandId]);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ type: 'webhook_endpoint_disabled', details: { reason: 'gone', endpoint_id: expect.any(Number) } });
    expect(JSON.stringify(alerts)).not.toContain(receiver.url);
  });

  it('a delivery queued before its endpoint was disabled becomes dead_letter without an attempt', async () => {
    const { receiver, brandId, apiKey } = await brandWithReceiver(() => ({ status: 200 }));
    await server.stopWorkers();
    try {
      await emitPaymentCompleted(t, brandId, 7);
      const off = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { url: receiver.url, events: ['payment.completed'], enabled: false } });
      expect(off.body.data).toMatchObject({ enabled: false, disabled_reason: 'merchant' });
    } finally {
      await server.startWorkers();
    }
    const [delivery] = await settle(brandId);
    expect(delivery).toMatchObject({ status: 'dead_letter', attempts: 0, last_error: 'endpoint disabled (merchant)' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('keeps only the first 4 KB of a response body, and logs a refused connection', async () => {
    const { brandId } = await brandWithReceiver(() => ({ status: 500, body: 'x'.repeat(10_000) }));
    await emitPaymentCompleted(t, brandId, 8);
    const [delivery] = await settle(brandId);
    const attempts = await t.sql<{ n: number }>('SELECT length(response_body) AS n FROM webhook_attempts WHERE delivery_id = $1', [delivery!.id]);
    expect(attempts.map((a) => a.n)).toEqual([4096, 4096, 4096, 4096]);

    const closedPort = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const { brandId: b2 } = await brandWithReceiver(() => ({ status: 200 }), () => `http://127.0.0.1:${closedPort}/hooks`);
    await emitPaymentCompleted(t, b2, 9);
    const [d2] = await settle(b2);
    const a2 = await attemptsOf(t, d2!.id);
    expect(d2).toMatchObject({ status: 'dead_letter', attempts: 4, response_status: null });
    expect(a2.map((a) => a.error_kind)).toEqual(['connection', 'connection', 'connection', 'connection']);
  });
});
