import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { constructEvent } from '../../clients/shared/webhook-verify.ts';
import { replayDeadLetter } from '../../server/domain/webhooks/deliveries.ts';
import { startReceiver, verifyingResponder, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { attemptsOf, deliveriesOf, emitPaymentCompleted, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';

let server: WebhookTestServer;
let t: TestContext;
let receiver: WebhookReceiver;
let brandId: number;
let apiKey: string;
let secret: string;
let n = 0;

beforeAll(async () => {
  server = await startWebhookTestServer();
  t = server.t;
  receiver = await startReceiver();
  ({ brandId, apiKey } = await t.createBrand('Delivery Brand'));
  const res = await t.request('PUT', '/api/v1/webhooks/endpoint', {
    token: apiKey,
    body: { url: receiver.url, events: ['payment.completed', 'payment.failed', 'refund.completed'] },
  });
  expect(res.status).toBe(201);
  secret = res.body.data.secret;
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});
beforeEach(() => {
  receiver.respond = verifyingResponder(() => secret);
});

async function emit(): Promise<{ deliveryId: string; trx: string }> {
  n += 1;
  await emitPaymentCompleted(t, brandId, n);
  const rows = await deliveriesOf(t, brandId);
  return { deliveryId: rows.at(-1)!.id, trx: `TRX-${String(n).padStart(6, '0')}` };
}

const finalStatus = (deliveryId: string) =>
  eventually(async () => {
    const [row] = await t.sql<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [deliveryId]);
    return row && (row.status === 'success' || row.status === 'dead_letter') ? row.status : null;
  }, 20_000, `delivery ${deliveryId} final`);

const requestsFor = (trx: string) => receiver.requests.filter((r) => r.rawBody.includes(trx));

describe('webhook delivery', () => {
  it('delivers the first time: signed body, stable id headers, one attempt logged', async () => {
    const { deliveryId, trx } = await emit();
    expect(await finalStatus(deliveryId)).toBe('success');
    const [req] = requestsFor(trx);
    expect(requestsFor(trx)).toHaveLength(1);
    expect(req!.status).toBe(200);
    const event = constructEvent(req!.rawBody, req!.headers as Record<string, string>, secret);
    expect(event).toMatchObject({ event: 'payment.completed', data: { trx_id: trx, amount: '1250.00', currency: 'BDT' } });
    expect(req!.method).toBe('POST');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['x-webhook-id']).toBe(event.id);
    expect(req!.headers['x-webhook-event']).toBe('payment.completed');
    expect(req!.headers['x-webhook-attempt']).toBe('1');
    expect(req!.headers['x-webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const list = await t.request('GET', '/api/v1/webhooks/deliveries', { token: apiKey });
    expect(list.status).toBe(200);
    const item = list.body.data.find((d: { id: number }) => d.id === Number(deliveryId));
    const [endpoint] = await t.sql<{ id: string }>('SELECT id FROM webhook_endpoints WHERE brand_id = $1', [brandId]);
    expect(item).toEqual({
      id: Number(deliveryId),
      endpoint_id: Number(endpoint!.id),
      event_id: event.id,
      transaction_id: n,
      event: 'payment.completed',
      url: receiver.url,
      payload: req!.rawBody,
      response_status: 200,
      response_body: 'verified',
      attempts: 1,
      status: 'success',
      last_error: null,
      next_attempt_at: null,
      last_attempt_at: expect.stringMatching(/Z$/),
      delivered_at: expect.stringMatching(/Z$/),
      created_at: expect.stringMatching(/Z$/),
      livemode: true,
      test: false,
    });
    const detail = await t.request('GET', `/api/v1/webhooks/deliveries/${deliveryId}`, { token: apiKey });
    expect(detail.status).toBe(200);
    expect(detail.body.data.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'success', response_status: 200, response_body: 'verified', error_kind: null, error: null, next_attempt_at: null }),
    ]);
    expect(detail.body.data.attempt_log[0].duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('retries after a 500 and succeeds: same id and bytes, both attempts logged, backoff between them', async () => {
    const seen = (id: unknown) => receiver.requests.filter((r) => r.headers['x-webhook-id'] === id).length;
    receiver.respond = (req) => (seen(req.headers['x-webhook-id']) === 1 ? { status: 500, body: 'boom' } : { status: 200, body: 'ok' });
    const { deliveryId, trx } = await emit();
    expect(await finalStatus(deliveryId)).toBe('success');
    const reqs = requestsFor(trx);
    expect(reqs.map((r) => r.status)).toEqual([500, 200]);
    expect(reqs[1]!.headers['x-webhook-id']).toBe(reqs[0]!.headers['x-webhook-id']);
    expect(reqs[1]!.rawBody).toBe(reqs[0]!.rawBody);
    expect(reqs.map((r) => r.headers['x-webhook-attempt'])).toEqual(['1', '2']);
    // base 0.3 s: the first retry waits between 0.15 and 0.3 s (equal jitter), then up to one poll.
    expect(reqs[1]!.at - reqs[0]!.at).toBeGreaterThanOrEqual(140);
    const attempts = await attemptsOf(t, deliveryId);
    expect(attempts.map((a) => [a.attempt, a.outcome, a.response_status, a.error])).toEqual([
      [1, 'failure', 500, 'receiver answered 500'],
      [2, 'success', 200, null],
    ]);
    expect(attempts[0]!.next_attempt_at).not.toBeNull();
    const [row] = await deliveriesOf(t, brandId).then((rows) => rows.filter((r) => r.id === deliveryId));
    expect(row).toMatchObject({ status: 'success', attempts: 2, response_status: 200 });
  });

  it('replays a dead letter after the receiver recovers, keeping the delivery id, the event id and the attempt count', async () => {
    receiver.respond = () => ({ status: 500, body: 'down' });
    const { deliveryId, trx } = await emit();
    expect(await finalStatus(deliveryId)).toBe('dead_letter');
    expect(requestsFor(trx)).toHaveLength(4);
    // Nothing reached the endpoint during the whole window: it is disabled and says why.
    const ep = await t.request('GET', '/api/v1/webhooks/endpoint', { token: apiKey });
    expect(ep.body.data).toMatchObject({ enabled: false, disabled_reason: 'failing' });

    const em = t.runtime.deps.db;
    await expect(replayDeadLetter(em, Number(deliveryId))).rejects.toMatchObject({ code: 'INVALID_STATE', message: 'The webhook endpoint is disabled; enable it before replaying' });

    receiver.respond = verifyingResponder(() => secret);
    const put = await t.request('PUT', '/api/v1/webhooks/endpoint', {
      token: apiKey,
      body: { url: receiver.url, events: ['payment.completed', 'payment.failed', 'refund.completed'], enabled: true },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null, failing_since: null });
    expect(put.body.data.secret).toBeUndefined();

    const replayed = await replayDeadLetter(em, Number(deliveryId));
    expect(replayed).toMatchObject({ id: Number(deliveryId), status: 'pending', attempts: 4 });
    expect(await finalStatus(deliveryId)).toBe('success');
    const reqs = requestsFor(trx);
    expect(reqs.map((r) => r.status)).toEqual([500, 500, 500, 500, 200]);
    expect(new Set(reqs.map((r) => r.headers['x-webhook-id'])).size).toBe(1);
    expect(new Set(reqs.map((r) => r.rawBody)).size).toBe(1);
    expect(reqs[4]!.headers['x-webhook-attempt']).toBe('5');
    const [row] = (await deliveriesOf(t, brandId)).filter((r) => r.id === deliveryId);
    expect(row).toMatchObject({ status: 'success', attempts: 5 });
    await expect(replayDeadLetter(em, Number(deliveryId))).rejects.toMatchObject({ code: 'INVALID_STATE' });
  });

  it('a receiver on the SDK verifier rejects a tampered body with 401; secrets are encrypted at rest and never logged', async () => {
    const { deliveryId, trx } = await emit();
    expect(await finalStatus(deliveryId)).toBe('success');
    const [genuine] = requestsFor(trx);
    expect(genuine!.status).toBe(200);
    const headers = {
      'content-type': 'application/json',
      'x-webhook-id': String(genuine!.headers['x-webhook-id']),
      'x-webhook-event': String(genuine!.headers['x-webhook-event']),
      'x-webhook-signature': String(genuine!.headers['x-webhook-signature']),
    };
    const tampered = genuine!.rawBody.replace('"amount":"1250.00"', '"amount":"9250.00"');
    expect(tampered).not.toBe(genuine!.rawBody);
    const forged = await fetch(receiver.url, { method: 'POST', headers, body: tampered });
    expect(forged.status).toBe(401);
    expect(await forged.text()).toBe('no_matching_signature');
    const resent = await fetch(receiver.url, { method: 'POST', headers, body: genuine!.rawBody });
    expect(resent.status).toBe(200);

    const [stored] = await t.sql<{ secret_encrypted: string }>('SELECT secret_encrypted FROM webhook_endpoints WHERE brand_id = $1', [brandId]);
    expect(stored!.secret_encrypted).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(stored!.secret_encrypted).not.toContain(secret.slice(6));
    const logs = t.logs.join('\n');
    expect(logs).toContain('webhook attempt');
    expect(logs).not.toContain(secret.slice(6));
    expect(logs).not.toContain(receiver.url);
  });

  it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
    const oldSecret = secret;
    const rot = await t.request('POST', '/api/v1/webhooks/endpoint/secret-rotations', { token: apiKey });
    expect(rot.status).toBe(201);
    const newSecret: string = rot.body.data.secret;
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSecret).not.toBe(oldSecret);
    const expires = Date.parse(rot.body.data.previous_secret_expires_at);
    expect(expires - Date.now()).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    const ep = await t.request('GET', '/api/v1/webhooks/endpoint', { token: apiKey });
    expect(ep.body.data.previous_secret_expires_at).toBe(rot.body.data.previous_secret_expires_at);

    // A receiver still on the old secret keeps verifying during the overlap.
    receiver.respond = verifyingResponder(() => oldSecret);
    const during = await emit();
    expect(await finalStatus(during.deliveryId)).toBe('success');
    const [duringReq] = requestsFor(during.trx);
    expect(String(duringReq!.headers['x-webhook-signature']).match(/v1=/g)).toHaveLength(2);
    expect(() => constructEvent(duringReq!.rawBody, duringReq!.headers as Record<string, string>, newSecret)).not.toThrow();

    // Past the overlap (moved in the database rather than waiting a day).
    await t.sql(
      `UPDATE webhook_endpoints SET previous_secrets = (SELECT jsonb_agg(jsonb_set(p, '{expires_at}', to_jsonb((now() - interval '1 second')::text))) FROM jsonb_array_elements(previous_secrets) p) WHERE brand_id = $1`,
      [brandId],
    );
    receiver.respond = () => ({ status: 200 });
    const after = await emit();
    expect(await finalStatus(after.deliveryId)).toBe('success');
    const [afterReq] = requestsFor(after.trx);
    expect(String(afterReq!.headers['x-webhook-signature']).match(/v1=/g)).toHaveLength(1);
    expect(() => constructEvent(afterReq!.rawBody, afterReq!.headers as Record<string, string>, newSecret)).not.toThrow();
    expect(() => constructEvent(afterReq!.rawBody, afterReq!.headers as Record<string, string>, oldSecret)).toThrow(/No signature matches/);
    const ep2 = await t.request('GET', '/api/v1/webhooks/endpoint', { token: apiKey });
    expect(ep2.body.data.previous_secret_expires_at).toBeNull();
    secret = newSecret;
  });
});
