import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { deliveriesOf, emitPaymentCompleted, fastSettings, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';
import { adminRequest, auditCount, auditRows } from './admin-support.ts';

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

/**
 * A brand whose endpoint failed every attempt of `events` deliveries (now dead
 * letters, endpoint disabled). One event at a time: the first delivery to use up
 * its attempts disables the endpoint (nothing ever succeeded there), and a
 * delivery still waiting for its retry is then dead-lettered without it. The
 * retry delays are jittered, so with several in flight which one finishes first,
 * and how many attempts the others got, is chance. Re-enabling between events
 * gives each delivery its full schedule.
 */
async function failingBrand(events: number, from: number) {
  const { brandId, apiKey } = await t.createBrand('Dead Letter Brand');
  const body = { url: receiver.url, events: ['payment.completed', 'payment.failed'] };
  const reenable = async () => expect((await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { ...body, enabled: true } })).status).toBe(200);
  expect((await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body })).status).toBe(201);
  let rows: Awaited<ReturnType<typeof deliveriesOf>> = [];
  for (let i = 0; i < events; i++) {
    if (i > 0) await reenable();
    await emitPaymentCompleted(t, brandId, from + i, i % 2 ? 'payment.failed' : 'payment.completed');
    rows = await eventually(async () => {
      const r = await deliveriesOf(t, brandId);
      return r.length === i + 1 && r.every((d) => d.status === 'dead_letter') ? r : null;
    }, 20_000, 'dead letters');
  }
  // Each one used its attempts on the receiver: none was cut short by a disabled endpoint.
  expect(rows.map((r) => [r.attempts, r.response_status])).toEqual(rows.map(() => [2, 500]));
  return { brandId, rows, reenable };
}

describe('webhook deliveries', () => {
  it('list across brands with filters; get one with every attempt', async () => {
    const a = await failingBrand(2, 100);
    const b = await failingBrand(1, 200);
    const all = await adminRequest(t, 'GET', '/webhook-deliveries?status=dead_letter');
    expect(all.status).toBe(200);
    expect(all.body.meta.total).toBeGreaterThanOrEqual(3);
    const ofA = await adminRequest(t, 'GET', `/webhook-deliveries?brand_id=${a.brandId}`);
    expect(ofA.body.data.map((d: { id: number }) => String(d.id)).sort()).toEqual(a.rows.map((r) => r.id).sort());
    expect(ofA.body.data[0]).toMatchObject({ brand_id: a.brandId, status: 'dead_letter', attempts: 2, response_status: 500, url: receiver.url, dead_lettered_at: expect.any(String) });
    const failed = await adminRequest(t, 'GET', `/webhook-deliveries?brand_id=${a.brandId}&event=payment.failed`);
    expect(failed.body.data.map((d: { event: string }) => d.event)).toEqual(['payment.failed']);
    const today = new Date().toISOString().slice(0, 10);
    expect((await adminRequest(t, 'GET', `/webhook-deliveries?brand_id=${b.brandId}&from=${today}&to=${today}`)).body.meta.total).toBe(1);
    expect((await adminRequest(t, 'GET', `/webhook-deliveries?brand_id=${b.brandId}&to=2020-01-01`)).body.meta.total).toBe(0);

    const detail = await adminRequest(t, 'GET', `/webhook-deliveries/${b.rows[0]!.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data.attempt_log.map((x: { attempt: number; outcome: string; response_status: number }) => [x.attempt, x.outcome, x.response_status])).toEqual([
      [1, 'failure', 500],
      [2, 'failure', 500],
    ]);
    expect(JSON.parse(detail.body.data.payload)).toMatchObject({ id: detail.body.data.event_id, event: 'payment.completed' });
  });

  it('replay one dead letter: refused while the endpoint is disabled, then back to pending, delivered, same ids, audited', async () => {
    const a = await failingBrand(1, 300);
    const id = a.rows[0]!.id;
    const audits = await auditCount(t);
    const refused = await adminRequest(t, 'POST', `/webhook-deliveries/${id}/replays`);
    expect(refused.status).toBe(409);
    expect(refused.body.errors).toEqual([{ code: 'INVALID_STATE', message: 'The webhook endpoint is disabled; enable it before replaying', field: null }]);
    expect(await auditCount(t)).toBe(audits);

    await a.reenable();
    receiver.respond = () => ({ status: 200 });
    const before = (await adminRequest(t, 'GET', `/webhook-deliveries/${id}`)).body.data;
    const replayed = await adminRequest(t, 'POST', `/webhook-deliveries/${id}/replays`, {}, { 'x-admin-actor': 'ops' });
    expect(replayed.status).toBe(200);
    expect(replayed.body.data).toMatchObject({ id: Number(id), event_id: before.event_id, status: 'pending', attempts: 2, dead_lettered_at: null });
    await eventually(async () => (await deliveriesOf(t, a.brandId))[0]!.status === 'success', 20_000, 'replay delivered');
    const ids = receiver.requests.filter((r) => r.status === 200).map((r) => r.headers['x-webhook-id']);
    expect(ids).toContain(before.event_id);
    const [row] = (await auditRows(t, 'webhook_delivery.replay')).filter((r) => r.target_id === id);
    expect([row!.actor, row!.brand_id, row!.before, row!.after]).toEqual([
      'admin:ops',
      String(a.brandId),
      { status: 'dead_letter', attempts: 2, event_id: before.event_id },
      { status: 'pending', attempts: 2, event_id: before.event_id },
    ]);
    // No longer a dead letter: a second replay is refused.
    const again = await adminRequest(t, 'POST', `/webhook-deliveries/${id}/replays`);
    expect(again.status).toBe(409);
    expect(again.body.errors[0].message).toBe('Only dead letters can be replayed; this delivery is success');
    receiver.respond = () => ({ status: 500 });
  });

  it('replay every dead letter since a time (one brand): counts, one audit row; nothing to replay records nothing', async () => {
    const a = await failingBrand(2, 400);
    await t.sql(`UPDATE webhook_deliveries SET dead_lettered_at = now() - interval '2 days' WHERE id = $1`, [a.rows[0]!.id]);
    const since = new Date(Date.now() - 60 * 60 * 1000).toISOString();
    const whileDisabled = await adminRequest(t, 'POST', '/webhook-deliveries/dead-letter-replays', { since, brand_id: a.brandId });
    expect(whileDisabled.body.data).toEqual({ replayed: 0, skipped_disabled: 1 });
    await a.reenable();
    receiver.respond = () => ({ status: 200 });
    const res = await adminRequest(t, 'POST', '/webhook-deliveries/dead-letter-replays', { since, brand_id: a.brandId });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ replayed: 1, skipped_disabled: 0 });
    const statuses = await eventually(async () => {
      const rows = await deliveriesOf(t, a.brandId);
      return rows.some((r) => r.status === 'success') ? rows.map((r) => [r.id, r.status, r.attempts]) : null;
    }, 20_000, 'replay delivered');
    // The one that died before `since` is left alone; the other was delivered on its third attempt.
    expect(statuses).toEqual([
      [a.rows[0]!.id, 'dead_letter', 2],
      [a.rows[1]!.id, 'success', 3],
    ]);
    receiver.respond = () => ({ status: 500 });
    const rows = (await auditRows(t, 'webhook_delivery.replay_dead_letters')).filter((r) => r.brand_id === String(a.brandId));
    expect(rows.map((r) => [r.target_id, r.before, r.after])).toEqual([[null, { status: 'dead_letter', since: new Date(since).toISOString() }, { status: 'pending', replayed: 1, skipped_disabled: 0 }]]);
  });

  it('errors: unknown delivery 404, bad input 400, unknown brand 404', async () => {
    for (const [method, path] of [['GET', '/webhook-deliveries/999999'], ['POST', '/webhook-deliveries/999999/replays']] as const) {
      const res = await adminRequest(t, method, path);
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('DELIVERY_NOT_FOUND');
    }
    for (const [path, field] of [
      ['/webhook-deliveries?status=failed', 'status'],
      ['/webhook-deliveries?event=payment.created', 'event'],
      ['/webhook-deliveries?from=2026-02-30', 'from'],
      ['/webhook-deliveries?from=2026-03-02&to=2026-03-01', 'to'],
      ['/webhook-deliveries/abc', 'delivery_id'],
    ]) {
      const res = await adminRequest(t, 'GET', path);
      expect(res.status, path).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    for (const [body, field] of [
      [{}, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{ since: '2026-01-01T00:00:00Z', brand_id: '1' }, 'brand_id'],
      [{ since: '2026-01-01T00:00:00Z', all: true }, 'all'],
    ] as const) {
      const res = await adminRequest(t, 'POST', '/webhook-deliveries/dead-letter-replays', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    const unknown = await adminRequest(t, 'POST', '/webhook-deliveries/dead-letter-replays', { since: '2026-01-01T00:00:00Z', brand_id: 999999 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].code).toBe('BRAND_NOT_FOUND');
  });
});
