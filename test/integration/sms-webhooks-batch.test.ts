import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constructEvent } from '../../clients/shared/webhook-verify.ts';
import { forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsScene, type SmsScene } from '../support/sms-matching.ts';
import { startReceiver, verifyingResponder, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';

/**
 * A batch of SMS completing payments of a brand with a webhook endpoint records
 * the events, their deliveries and the deliveries' pg-boss jobs in its own
 * transaction (server/domain/webhooks/outbox.ts, recordEvents): every
 * completion reaches the merchant signed, once.
 */

let server: WebhookTestServer;
let receiver: WebhookReceiver;
let scene: SmsScene;
let secret: string;

beforeAll(async () => {
  server = await startWebhookTestServer(undefined, { RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off' });
  receiver = await startReceiver();
  scene = await smsScene(server.t);
  const res = await server.t.request('PUT', '/api/v1/webhooks/endpoint', { token: scene.apiKey, body: { url: receiver.url, events: ['payment.completed'] } });
  expect(res.status).toBe(201);
  secret = res.body.data.secret;
  receiver.respond = verifyingResponder(() => secret);
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function paymentsFor(amounts: string[]) {
  const out = [];
  for (const amount of amounts) {
    const id = newGatewayTrxId();
    out.push({ id, amount, ...(await seedPayment(server.t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: id })) });
  }
  return out;
}

describe('events with deliveries of a batch', () => {
  it('a forwarded SMS completing a payment of a brand with an endpoint: one delivery, one job, and the signed event arrives once', async () => {
    const t = server.t;
    const [p] = await paymentsFor(['711.00']);
    const answers = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(p!.amount, p!.id) }]);
    expect(answers[0]!.match_status).toBe('matched');

    const [event] = await t.sql<{ id: string; public_id: string }>(`SELECT id, public_id FROM webhook_events WHERE transaction_id = $1 AND event = 'payment.completed'`, [p!.transaction.id]);
    const deliveries = await t.sql<{ id: string; endpoint_id: string; status: string }>('SELECT id, endpoint_id, status FROM webhook_deliveries WHERE event_id = $1', [event!.id]);
    expect(deliveries).toHaveLength(1);
    const jobs = await t.sql<{ data: { deliveryId: number } }>(`SELECT data FROM pgboss.job WHERE name = 'webhook-deliver' AND singleton_key = $1`, [`delivery:${deliveries[0]!.id}`]);
    expect(jobs.map((j) => j.data)).toEqual([{ deliveryId: Number(deliveries[0]!.id) }]);

    await receiver.waitFor((reqs) => reqs.some((r) => r.rawBody.includes(event!.public_id) && r.status === 200));
    const got = receiver.requests.filter((r) => r.rawBody.includes(event!.public_id));
    expect(got.filter((r) => r.status === 200)).toHaveLength(1);
    const verified = constructEvent(got[0]!.rawBody, got[0]!.headers as Record<string, string>, secret) as { id: string; event: string; data: { id: number; status: string } };
    expect(verified).toMatchObject({ id: event!.public_id, event: 'payment.completed', data: { id: p!.transaction.id, status: 'completed' } });
  });

  it('a batch of three: each event its own delivery and job, ids ascending in the order decided, each delivered once', async () => {
    const t = server.t;
    const ps = await paymentsFor(['720.00', '721.00', '722.00']);
    const at = Date.now() - 60_000;
    const answers = await forwardSms(t, scene.device, ps.map((p, i) => ({ sender: 'bKash', body: smsBodies.bkash(p.amount, p.id), received_at: new Date(at + i).toISOString() })));
    expect(answers.map((a) => a.match_status)).toEqual(['matched', 'matched', 'matched']);
    const rows = await t.sql<{ transaction_id: string; public_id: string; delivery_id: string }>(
      `SELECT e.transaction_id, e.public_id, d.id AS delivery_id FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id
        WHERE e.transaction_id = ANY($1::bigint[]) ORDER BY e.id`,
      [ps.map((p) => p.transaction.id)],
    );
    expect(rows.map((r) => Number(r.transaction_id))).toEqual(ps.map((p) => p.transaction.id));
    const ids = rows.map((r) => Number(r.delivery_id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const jobs = await t.sql<{ singleton_key: string }>(`SELECT singleton_key FROM pgboss.job WHERE name = 'webhook-deliver' AND singleton_key = ANY($1::text[])`, [ids.map((id) => `delivery:${id}`)]);
    expect(jobs).toHaveLength(3);
    await receiver.waitFor((reqs) => rows.every((r) => reqs.some((q) => q.rawBody.includes(r.public_id) && q.status === 200)));
    for (const r of rows) expect(receiver.requests.filter((q) => q.rawBody.includes(r.public_id) && q.status === 200)).toHaveLength(1);
  });
});
