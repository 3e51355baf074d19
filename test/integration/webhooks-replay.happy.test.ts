import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayDeadLetter, replayDeadLetters } from '../../server/domain/webhooks/deliveries.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { deliveriesOf, emitPaymentCompleted, fastSettings, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';

let server: WebhookTestServer;
let t: TestContext;
let receiver: WebhookReceiver;

beforeAll(async () => {
  server = await startWebhookTestServer({ ...fastSettings, webhook_max_attempts: 2 });
  t = server.t;
  receiver = await startReceiver(() => ({ status: 500 }));
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const em = () => t.runtime.deps.db;

async function deadLetters(brandId: number, count: number) {
  return eventually(async () => {
    const rows = await deliveriesOf(t, brandId);
    return rows.length === count && rows.every((r) => r.status === 'dead_letter') ? rows : null;
  }, 20_000, `${count} dead letters`);
}

async function brandFailing(events: number, from: number) {
  const { brandId, apiKey } = await t.createBrand();
  const body = { url: receiver.url, events: ['payment.completed'] };
  expect((await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body })).status).toBe(201);
  for (let i = 0; i < events; i++) await emitPaymentCompleted(t, brandId, from + i);
  const rows = await deadLetters(brandId, events);
  return { brandId, apiKey, rows, reenable: () => t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { ...body, enabled: true } }) };
}

describe('replaying dead letters', () => {
  it('replays every dead letter since a time, keeping ids; older ones, other brands and disabled endpoints are left alone', async () => {
    const a = await brandFailing(3, 1);
    const b = await brandFailing(1, 10);
    // One of A's became a dead letter "yesterday": before the cut-off.
    await t.sql(`UPDATE webhook_deliveries SET dead_lettered_at = now() - interval '1 day' WHERE id = $1`, [a.rows[0]!.id]);
    const since = new Date(Date.now() - 60 * 60 * 1000);

    // Every endpoint is disabled (nothing got through): a replay would only fail again.
    expect(await replayDeadLetters(em(), { since, brandId: a.brandId })).toEqual({ replayed: 0, skippedDisabled: 2 });

    receiver.respond = () => ({ status: 200 });
    expect((await a.reenable()).status).toBe(200);
    expect(await replayDeadLetters(em(), { since, brandId: a.brandId })).toEqual({ replayed: 2, skippedDisabled: 0 });
    await eventually(async () => (await deliveriesOf(t, a.brandId)).filter((r) => r.status === 'success').length === 2, 20_000, 'replays delivered');
    const after = await deliveriesOf(t, a.brandId);
    // Same ids, one attempt more each (a delivery may have been dead-lettered after one attempt,
    // when another delivery's last failure disabled the endpoint first: that is timing, not the replay).
    expect(after.map((r) => [r.id, r.status, r.attempts])).toEqual([
      [a.rows[0]!.id, 'dead_letter', a.rows[0]!.attempts],
      [a.rows[1]!.id, 'success', a.rows[1]!.attempts + 1],
      [a.rows[2]!.id, 'success', a.rows[2]!.attempts + 1],
    ]);
    expect((await deliveriesOf(t, b.brandId)).map((r) => r.status)).toEqual(['dead_letter']);

    // The one before the cut-off can still be replayed on its own.
    await replayDeadLetter(em(), Number(a.rows[0]!.id), { brandId: a.brandId });
    await eventually(async () => (await deliveriesOf(t, a.brandId)).every((r) => r.status === 'success'), 20_000, 'single replay delivered');
  });

  it("scoped to a brand, a replay of another brand's delivery is DELIVERY_NOT_FOUND", async () => {
    receiver.respond = () => ({ status: 500 });
    const a = await brandFailing(1, 20);
    const { brandId: other } = await t.createBrand();
    await expect(replayDeadLetter(em(), Number(a.rows[0]!.id), { brandId: other })).rejects.toMatchObject({ code: 'DELIVERY_NOT_FOUND' });
    await expect(replayDeadLetter(em(), 987654321)).rejects.toMatchObject({ code: 'DELIVERY_NOT_FOUND' });
  });
});
