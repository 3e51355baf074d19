import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaycollectMerchant } from '../../clients/merchant/index.ts';
import { constructEvent } from '../../clients/shared/webhook-verify.ts';
import type { Mode } from '../../contract/vocabulary.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import { recordEvent, type WebhookEventName } from '../../server/domain/webhooks/outbox.ts';
import type { TestContext } from '../support/harness.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually, waitForQueuesDrained } from '../support/wait.ts';
import { DELIVER_QUEUE } from '../../server/domain/webhooks/queue.ts';
import { samplePayment, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import { transaction } from '../../server/domain/db.ts';

/**
 * Several webhook endpoints per brand: each with its own URL, events, secret,
 * health and enabled state; events fan out to every subscribed enabled endpoint
 * of their mode, each signed with that endpoint's secret.
 */

let server: WebhookTestServer;
let t: TestContext;
let receiver: WebhookReceiver;

beforeAll(async () => {
  server = await startWebhookTestServer();
  t = server.t;
  receiver = await startReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function brandWithKeys(name: string) {
  const { brandId, apiKey } = await t.createBrand(name);
  const testKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'test', mode: 'test' })).key;
  return {
    brandId,
    live: new PaycollectMerchant({ apiKey, baseUrl: t.baseUrl, maxRetries: 0 }),
    test: new PaycollectMerchant({ apiKey: testKey, baseUrl: t.baseUrl, maxRetries: 0 }),
    liveKey: apiKey,
    testKey,
  };
}

let n = 0;
async function emit(brandId: number, mode: Mode, event: WebhookEventName = 'payment.completed') {
  n += 1;
  return transaction(t.runtime.deps.db, (tx) =>
    recordEvent(tx, { brandId, mode, event, data: { ...samplePayment(n), status: event.split('.')[1]! }, transactionId: null }),
  );
}

const at = (path: string) => receiver.requests.filter((r) => r.path === path);
const eventIdOf = async (eventId: number) => (await t.sql<{ public_id: string }>('SELECT public_id FROM webhook_events WHERE id = $1', [eventId]))[0]!.public_id;

describe('the endpoint collection', () => {
  it('creates, lists, reads, changes and deletes endpoints; the secret is shown only at creation', async () => {
    const b = await brandWithKeys('Many Hooks');
    const one = await b.live.webhookEndpoints.create({ url: `${receiver.url}/crud-1`, events: ['payment.completed'], description: 'orders' });
    expect(one).toMatchObject({ mode: 'live', url: `${receiver.url}/crud-1`, description: 'orders', enabled: true, consecutive_failures: 0, last_failure_at: null });
    expect(one.secret).toMatch(/^whsec_/);
    const two = await b.live.webhookEndpoints.create({ url: `${receiver.url}/crud-2`, events: ['refund.completed', 'refund.failed'] });
    expect(two.secret).not.toBe(one.secret);

    const list = await b.live.webhookEndpoints.list();
    expect(list.map((e) => e.id)).toEqual([one.id, two.id]);
    expect(JSON.stringify(list)).not.toContain('whsec_');
    expect(await b.live.webhookEndpoints.get(two.id)).toMatchObject({ id: two.id, events: ['refund.completed', 'refund.failed'] });

    // PATCH changes only what is given; the secret (stored encrypted) stays.
    const [{ secret_encrypted: before }] = (await t.sql<{ secret_encrypted: string }>('SELECT secret_encrypted FROM webhook_endpoints WHERE id = $1', [two.id])) as [{ secret_encrypted: string }];
    expect(before).not.toContain(two.secret);
    const changed = await b.live.webhookEndpoints.update(two.id, { events: ['refund.failed'], enabled: false });
    expect(changed).toMatchObject({ url: `${receiver.url}/crud-2`, events: ['refund.failed'], enabled: false, disabled_reason: 'merchant' });
    expect((await b.live.webhookEndpoints.update(two.id, { enabled: true })).disabled_reason).toBeNull();
    expect((await t.sql('SELECT secret_encrypted FROM webhook_endpoints WHERE id = $1', [two.id]))[0]).toEqual({ secret_encrypted: before });

    const deleted = await b.live.webhookEndpoints.delete(one.id);
    expect(deleted.id).toBe(one.id);
    expect((await b.live.webhookEndpoints.list()).map((e) => e.id)).toEqual([two.id]);
  });

  it('fans an event out to every subscribed enabled endpoint, each signed with its own secret', async () => {
    const b = await brandWithKeys('Fan Out');
    const a = await b.live.webhookEndpoints.create({ url: `${receiver.url}/fan-a`, events: ['payment.completed'] });
    const c = await b.live.webhookEndpoints.create({ url: `${receiver.url}/fan-c`, events: ['payment.completed', 'payment.failed'] });
    const other = await b.live.webhookEndpoints.create({ url: `${receiver.url}/fan-other`, events: ['refund.completed'] });
    const off = await b.live.webhookEndpoints.create({ url: `${receiver.url}/fan-off`, events: ['payment.completed'], enabled: false });

    const recorded = await emit(b.brandId, 'live');
    expect(recorded.deliveryIds).toHaveLength(2);
    const publicId = await eventIdOf(recorded.eventId);
    await receiver.waitFor(() => at('/hooks/fan-a').length === 1 && at('/hooks/fan-c').length === 1);
    const [ra] = at('/hooks/fan-a');
    const [rc] = at('/hooks/fan-c');
    expect(ra!.rawBody).toBe(rc!.rawBody);
    expect(constructEvent(ra!.rawBody, ra!.headers as Record<string, string>, a.secret).id).toBe(publicId);
    expect(constructEvent(rc!.rawBody, rc!.headers as Record<string, string>, c.secret).id).toBe(publicId);
    // Each signed with its own secret only.
    expect(() => constructEvent(ra!.rawBody, ra!.headers as Record<string, string>, c.secret)).toThrow();
    expect(at('/hooks/fan-other')).toEqual([]);
    expect(at('/hooks/fan-off')).toEqual([]);

    // The delivery log names the endpoint of each delivery.
    const deliveries = await eventually(async () => {
      const list = await b.live.webhooks.listDeliveries();
      return list.filter((d) => d.event_id === publicId && d.status === 'success').length === 2 ? list : null;
    });
    expect(deliveries.filter((d) => d.event_id === publicId).map((d) => d.endpoint_id).sort()).toEqual([a.id, c.id].sort());
    expect(other.id).not.toBe(off.id);
  });

  it('an endpoint of a mode receives only that mode; the singular endpoint both', async () => {
    const b = await brandWithKeys('Modes');
    const single = await b.live.webhooks.putEndpoint({ url: `${receiver.url}/mode-both`, events: ['payment.completed'] });
    expect(single).toMatchObject({ mode: null });
    const live = await b.live.webhookEndpoints.create({ url: `${receiver.url}/mode-live`, events: ['payment.completed'] });
    const test = await b.test.webhookEndpoints.create({ url: `${receiver.url}/mode-test`, events: ['payment.completed'] });
    expect([live.mode, test.mode]).toEqual(['live', 'test']);

    // The live key sees its mode's endpoints and the both-modes one (a live object); the test key only its own.
    expect((await b.live.webhookEndpoints.list()).map((e) => e.id)).toEqual([single.id, live.id]);
    expect((await b.test.webhookEndpoints.list()).map((e) => e.id)).toEqual([test.id]);
    await expect(b.live.webhookEndpoints.get(test.id)).rejects.toMatchObject({ code: 'WEBHOOK_ENDPOINT_NOT_FOUND' });

    await emit(b.brandId, 'test');
    await emit(b.brandId, 'live');
    await receiver.waitFor(() => at('/hooks/mode-both').length === 2 && at('/hooks/mode-live').length === 1 && at('/hooks/mode-test').length === 1);
    const bodyOf = (path: string) => at(path).map((r) => JSON.parse(r.rawBody).livemode);
    expect(bodyOf('/hooks/mode-live')).toEqual([true]);
    expect(bodyOf('/hooks/mode-test')).toEqual([false]);
    expect(bodyOf('/hooks/mode-both').sort()).toEqual([false, true]);
  });

  it('the singular routes are an alias of the first endpoint the key sees', async () => {
    const b = await brandWithKeys('Alias');
    await expect(b.live.webhooks.getEndpoint()).rejects.toMatchObject({ code: 'WEBHOOK_ENDPOINT_NOT_FOUND' });
    const first = await b.live.webhookEndpoints.create({ url: `${receiver.url}/alias-1`, events: ['payment.completed'] });
    await b.live.webhookEndpoints.create({ url: `${receiver.url}/alias-2`, events: ['payment.completed'] });
    expect((await b.live.webhooks.getEndpoint()).id).toBe(first.id);
    // PUT replaces the default endpoint (200, no secret) rather than adding one.
    const put = await b.live.webhooks.putEndpoint({ url: `${receiver.url}/alias-1b`, events: ['refund.failed'] });
    expect(put).toMatchObject({ id: first.id, url: `${receiver.url}/alias-1b`, events: ['refund.failed'] });
    expect('secret' in put).toBe(false);
    expect(await b.live.webhookEndpoints.list()).toHaveLength(2);
    // The test key sees no endpoint of its own: PUT creates a test one (never one that receives live events).
    const created = await b.test.webhooks.putEndpoint({ url: `${receiver.url}/alias-t`, events: ['payment.completed'] });
    expect(created).toMatchObject({ mode: 'test' });
    expect('secret' in created && created.secret).toMatch(/^whsec_/);
  });
});

describe('a test key never touches what receives live events', () => {
  it('cannot repoint, disable, rotate, delete or read the both-modes endpoint, and live events keep reaching the merchant', async () => {
    const b = await brandWithKeys('No Takeover');
    const single = await b.live.webhooks.putEndpoint({ url: `${receiver.url}/merchant`, events: ['payment.completed'] });
    expect(single).toMatchObject({ mode: null });
    const secret = 'secret' in single ? single.secret! : '';
    const asTest = (method: string, path: string, body?: unknown) => t.request(method, `/api/v1${path}`, { token: b.testKey, ...(body ? { body } : {}) });

    // By id, through every plural route: not found, like another brand's.
    for (const [method, path, body] of [
      ['GET', `/webhooks/endpoints/${single.id}`],
      ['PATCH', `/webhooks/endpoints/${single.id}`, { url: `${receiver.url}/attacker` }],
      ['PATCH', `/webhooks/endpoints/${single.id}`, { enabled: false }],
      ['POST', `/webhooks/endpoints/${single.id}/secret-rotations`],
      ['DELETE', `/webhooks/endpoints/${single.id}`],
    ] as const) {
      const res = await asTest(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.errors[0].code).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    }
    expect((await asTest('GET', '/webhooks/endpoints')).body.data).toEqual([]);
    // The singular routes: the test key's own (test) endpoint, created by its PUT; the live one is untouched.
    expect((await asTest('GET', '/webhooks/endpoint')).status).toBe(404);
    expect((await asTest('POST', '/webhooks/endpoint/secret-rotations')).status).toBe(404);
    const put = await asTest('PUT', '/webhooks/endpoint', { url: `${receiver.url}/attacker`, events: ['payment.completed'], enabled: true });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    expect(put.body.data).toMatchObject({ mode: 'test' });
    expect(put.body.data.id).not.toBe(single.id);
    expect((await asTest('POST', '/webhooks/endpoint/secret-rotations')).status).toBe(201);
    expect(await b.live.webhooks.getEndpoint()).toMatchObject({ id: single.id, url: `${receiver.url}/merchant`, enabled: true, previous_secret_expires_at: null });

    // A live event reaches the merchant, signed with the secret it was given; nothing goes to the test key's URL.
    const event = await emit(b.brandId, 'live');
    const publicId = await eventIdOf(event.eventId);
    await receiver.waitFor(() => at('/hooks/merchant').some((r) => r.headers['x-webhook-id'] === publicId));
    const req = at('/hooks/merchant').find((r) => r.headers['x-webhook-id'] === publicId)!;
    const real = constructEvent(req.rawBody, req.headers as Record<string, string>, secret);
    expect(real).toMatchObject({ livemode: true });
    // A real event is not marked as a sample.
    expect('test' in real).toBe(false);
    expect(req.headers['x-webhook-test']).toBeUndefined();
    await waitForQueuesDrained(t, [DELIVER_QUEUE]);
    expect(at('/hooks/attacker').filter((r) => r.headers['x-webhook-id'] === publicId)).toEqual([]);
  });
});

describe('per endpoint: test event, secret rotation, health, deletion', () => {
  it('sends a test event to that endpoint only, whatever it subscribed to', async () => {
    const b = await brandWithKeys('Per Test');
    const x = await b.test.webhookEndpoints.create({ url: `${receiver.url}/pt-x`, events: ['refund.failed'] });
    await b.test.webhookEndpoints.create({ url: `${receiver.url}/pt-y`, events: ['payment.completed'] });
    const delivery = await b.test.webhookEndpoints.sendTest(x.id, { event: 'payment.completed' });
    expect(delivery).toMatchObject({ endpoint_id: x.id, test: true, livemode: false, url: `${receiver.url}/pt-x` });
    await receiver.waitFor(() => at('/hooks/pt-x').length === 1);
    const [req] = at('/hooks/pt-x');
    expect(constructEvent(req!.rawBody, req!.headers as Record<string, string>, x.secret).id).toBe(delivery.event_id);
    await waitForQueuesDrained(t, [DELIVER_QUEUE]);
    expect(at('/hooks/pt-y')).toEqual([]);
  });

  it('rotates one endpoint\'s secret: both sign for a while, the other endpoint is untouched', async () => {
    const b = await brandWithKeys('Per Rotate');
    const x = await b.live.webhookEndpoints.create({ url: `${receiver.url}/rot-x`, events: ['payment.completed'] });
    const y = await b.live.webhookEndpoints.create({ url: `${receiver.url}/rot-y`, events: ['payment.completed'] });
    const rotated = await b.live.webhookEndpoints.rotateSecret(x.id);
    expect(rotated.secret).not.toBe(x.secret);
    expect((await b.live.webhookEndpoints.get(x.id)).previous_secret_expires_at).toBe(rotated.previous_secret_expires_at);
    expect((await b.live.webhookEndpoints.get(y.id)).previous_secret_expires_at).toBeNull();
    await emit(b.brandId, 'live');
    await receiver.waitFor(() => at('/hooks/rot-x').length === 1 && at('/hooks/rot-y').length === 1);
    const [rx] = at('/hooks/rot-x');
    const [ry] = at('/hooks/rot-y');
    expect(String(rx!.headers['x-webhook-signature']).match(/v1=/g)).toHaveLength(2);
    for (const s of [x.secret, rotated.secret]) expect(() => constructEvent(rx!.rawBody, rx!.headers as Record<string, string>, s)).not.toThrow();
    expect(String(ry!.headers['x-webhook-signature']).match(/v1=/g)).toHaveLength(1);
    expect(() => constructEvent(ry!.rawBody, ry!.headers as Record<string, string>, y.secret)).not.toThrow();
  });

  it('tracks health per endpoint; a 410 disables only the endpoint that answered it', async () => {
    const b = await brandWithKeys('Per Health');
    const gone = await b.live.webhookEndpoints.create({ url: `${receiver.url}/health-gone`, events: ['payment.completed'] });
    const flaky = await b.live.webhookEndpoints.create({ url: `${receiver.url}/health-flaky`, events: ['payment.completed'] });
    const fine = await b.live.webhookEndpoints.create({ url: `${receiver.url}/health-fine`, events: ['payment.completed'] });
    let flakyFailures = 2;
    receiver.respond = (req) => {
      if (req.path === '/hooks/health-gone') return { status: 410 };
      if (req.path === '/hooks/health-flaky' && flakyFailures-- > 0) return { status: 500 };
      return { status: 200, body: 'ok' };
    };
    try {
      await emit(b.brandId, 'live');
      const g = await eventually(async () => {
        const e = await b.live.webhookEndpoints.get(gone.id);
        return e.enabled ? null : e;
      });
      expect(g).toMatchObject({ disabled_reason: 'gone', consecutive_failures: 1 });
      expect(g.last_failure_at).not.toBeNull();
      // The flaky one failed twice, then succeeded: its streak is reset, it stays enabled.
      const f = await eventually(async () => {
        const e = await b.live.webhookEndpoints.get(flaky.id);
        return e.last_success_at ? e : null;
      });
      expect(f).toMatchObject({ enabled: true, consecutive_failures: 0, failing_since: null });
      expect(f.last_failure_at).not.toBeNull();
      expect(at('/hooks/health-flaky').map((r) => r.status)).toEqual([500, 500, 200]);
      const ok = await b.live.webhookEndpoints.get(fine.id);
      expect(ok).toMatchObject({ enabled: true, consecutive_failures: 0, last_failure_at: null });
      expect(ok.last_success_at).not.toBeNull();

      // A disabled endpoint gets nothing more; the others still do.
      const before = at('/hooks/health-gone').length;
      await emit(b.brandId, 'live');
      await receiver.waitFor(() => at('/hooks/health-fine').length === 2);
      expect(at('/hooks/health-gone')).toHaveLength(before);
      // Enabling it again clears the reason and the failure count.
      expect(await b.live.webhookEndpoints.update(gone.id, { enabled: true })).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
    } finally {
      receiver.respond = () => ({ status: 200, body: 'ok' });
    }
  });

  it('deleting an endpoint keeps its delivery log and dead-letters what was still pending', async () => {
    const b = await brandWithKeys('Per Delete');
    const x = await b.live.webhookEndpoints.create({ url: `${receiver.url}/del-x`, events: ['payment.completed'] });
    await emit(b.brandId, 'live');
    await receiver.waitFor(() => at('/hooks/del-x').length === 1);
    const done = await eventually(async () => (await b.live.webhooks.listDeliveries()).find((d) => d.status === 'success'));
    // Stop the workers so the next delivery stays pending while the endpoint goes.
    await server.stopWorkers();
    try {
      const pending = await emit(b.brandId, 'live');
      await b.live.webhookEndpoints.delete(x.id);
      const log = await b.live.webhooks.listDeliveries();
      expect(log.find((d) => d.id === done.id)).toMatchObject({ status: 'success', endpoint_id: null });
      expect(log.find((d) => d.id === pending.deliveryId)).toMatchObject({ status: 'dead_letter', endpoint_id: null, last_error: 'endpoint deleted' });
      await expect(b.live.webhookEndpoints.get(x.id)).rejects.toMatchObject({ code: 'WEBHOOK_ENDPOINT_NOT_FOUND' });
      // The admin cannot replay it anywhere: its endpoint is gone.
      const replay = await t.request('POST', `/api/admin/v1/webhook-deliveries/${pending.deliveryId}/replays`, {
        headers: { authorization: `Bearer ${t.runtime.deps.secrets.adminToken}` },
      });
      expect(replay.status).toBe(409);
      expect(replay.body.errors[0]).toMatchObject({ code: 'INVALID_STATE', message: 'The webhook endpoint of this delivery was deleted; it cannot be replayed' });
    } finally {
      await server.startWorkers();
    }
    await waitForQueuesDrained(t, [DELIVER_QUEUE]);
    expect(at('/hooks/del-x')).toHaveLength(1);
  });
});
