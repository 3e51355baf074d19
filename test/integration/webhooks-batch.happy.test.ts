import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { claimFirstAttempts, finishSuccesses, type ClaimedAttempt } from '../../server/domain/webhooks/delivery.ts';
import { readWebhookSettings } from '../../server/domain/webhooks/settings.ts';
import type { WebhookResponse } from '../../server/infra/http/outbound.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { attemptsOf, emitPaymentCompleted, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';

/**
 * The worker's batch paths (delivery.ts): one statement claims a batch's first
 * attempts, one records a group of successes. They must take exactly what the
 * general path would give them and leave the rest to it.
 */
let server: WebhookTestServer;
let t: TestContext;
let receiver: WebhookReceiver;

beforeAll(async () => {
  server = await startWebhookTestServer();
  await server.stopWorkers();
  t = server.t;
  receiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await server?.close();
});

const ok = (status = 200): WebhookResponse => ({ ok: true, status, responseBody: 'ok', retryAfter: null, durationMs: 7, error: null });

async function brandWithDeliveries(n: number): Promise<{ brandId: number; ids: number[] }> {
  const { brandId, apiKey } = await t.createBrand();
  await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { url: receiver.url, events: ['payment.completed'] } });
  for (let i = 1; i <= n; i++) await emitPaymentCompleted(t, brandId, i);
  const rows = await t.sql<{ id: string }>('SELECT id FROM webhook_deliveries WHERE brand_id = $1 ORDER BY id', [brandId]);
  return { brandId, ids: rows.map((r) => Number(r.id)) };
}

const claimOpts = async () => ({ cipher: t.runtime.deps.crypto.pii, settings: await readWebhookSettings(t.runtime.deps.db) });

describe('claiming a batch of first attempts', () => {
  it('claims exactly the due first attempts of enabled endpoints that nobody holds; the general path keeps the rest', async () => {
    const a = await brandWithDeliveries(6);
    const off = await brandWithDeliveries(1);
    const [first, retrying, abandoned, notDue, locked, plain] = a.ids as [number, number, number, number, number, number];
    await t.sql(`UPDATE webhook_deliveries SET status = 'retrying', attempts = 1, first_attempt_at = now() - interval '1 minute' WHERE id = $1`, [retrying]);
    await t.sql(`UPDATE webhook_deliveries SET attempts = 1, lease_token = gen_random_uuid(), lease_until = now() - interval '1 second' WHERE id = $1`, [abandoned]);
    await t.sql(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`, [notDue]);
    await t.sql('UPDATE webhook_endpoints SET enabled = false WHERE brand_id = $1', [off.brandId]);
    // Another worker holds this one (its row lock) while we claim.
    const other = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await other.connect();
    await other.query('BEGIN');
    await other.query('SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [locked]);
    let claims: Map<number, ClaimedAttempt>;
    try {
      claims = await claimFirstAttempts(t.runtime.deps.db, [...a.ids, ...off.ids], await claimOpts());
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
    expect([...claims.keys()].sort((x, y) => x - y)).toEqual([first, plain]);
    const claim = claims.get(first)!;
    expect(claim).toMatchObject({ deliveryId: first, attempt: 1, runAttempt: 1, url: receiver.url, event: 'payment.completed' });
    expect(claim.eventId).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(JSON.parse(claim.payload)).toMatchObject({ id: claim.eventId, event: 'payment.completed', data: { transaction_id: 1 } });
    expect(claim.secrets).toHaveLength(1);
    expect(claim.secrets[0]).toMatch(/^whsec_/);
    const rows = await t.sql<{ id: string; attempts: number; lease_token: string | null; first_attempt_at: Date | null; last_attempt_at: Date | null }>(
      'SELECT id, attempts, lease_token, first_attempt_at, last_attempt_at FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id',
      [[...a.ids, ...off.ids]],
    );
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    expect(byId.get(first)).toMatchObject({ attempts: 1, lease_token: claim.leaseToken });
    expect(byId.get(first)!.first_attempt_at).toEqual(byId.get(first)!.last_attempt_at);
    // Untouched: the general path decides them (and records the abandoned attempt, dead-letters the disabled one).
    expect(byId.get(retrying)).toMatchObject({ attempts: 1, lease_token: null });
    expect(byId.get(notDue)).toMatchObject({ attempts: 0, lease_token: null, first_attempt_at: null });
    expect(byId.get(locked)).toMatchObject({ attempts: 0, lease_token: null });
    expect(byId.get(abandoned)!.attempts).toBe(1);
    expect(byId.get(off.ids[0]!)).toMatchObject({ attempts: 0, lease_token: null });
  });

  it('claims nothing twice: a second batch over the same ids gets none of them', async () => {
    const { ids } = await brandWithDeliveries(3);
    const opts = await claimOpts();
    const [one, two] = await Promise.all([claimFirstAttempts(t.runtime.deps.db, ids, opts), claimFirstAttempts(t.runtime.deps.db, ids, opts)]);
    expect(one.size + two.size).toBe(3);
    expect([...one.keys()].filter((id) => two.has(id))).toEqual([]);
  });
});

describe('recording a group of successes', () => {
  it('moves each delivery whose lease holds to success and logs every attempt; a delivery taken over is logged but left alone', async () => {
    const { brandId, ids } = await brandWithDeliveries(3);
    const claims = await claimFirstAttempts(t.runtime.deps.db, ids, await claimOpts());
    const [c1, c2, c3] = ids.map((id) => claims.get(id)!) as [ClaimedAttempt, ClaimedAttempt, ClaimedAttempt];
    // c3's lease lapsed and another worker took the delivery over.
    await t.sql('UPDATE webhook_deliveries SET lease_token = gen_random_uuid() WHERE id = $1', [c3.deliveryId]);
    await t.sql(`UPDATE webhook_endpoints SET failing_since = now() - interval '1 hour' WHERE brand_id = $1`, [brandId]);

    const applied = await finishSuccesses(t.runtime.deps.db, [
      { claim: c1, response: ok(200) },
      { claim: c2, response: ok(204) },
      { claim: c3, response: ok(200) },
    ]);
    expect(applied).toEqual([true, true, false]);

    const rows = await t.sql<{ id: string; status: string; response_status: number | null; lease_token: string | null; delivered_at: Date | null }>(
      'SELECT id, status, response_status, lease_token, delivered_at FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id',
      [ids],
    );
    expect(rows.map((r) => [r.status, r.response_status, r.lease_token === null, r.delivered_at !== null])).toEqual([
      ['success', 200, true, true],
      ['success', 204, true, true],
      ['pending', null, false, false],
    ]);
    for (const c of [c1, c2, c3]) {
      const [attempt] = await attemptsOf(t, c.deliveryId);
      expect(attempt).toMatchObject({ attempt: 1, outcome: 'success', response_status: c === c2 ? 204 : 200, duration_ms: 7, error_kind: null, error: null, next_attempt_at: null });
      // To the microsecond: the attempt counts toward its run (requested_at >= first_attempt_at).
      const [same] = await t.sql<{ same: boolean }>(
        'SELECT a.requested_at = d.first_attempt_at AND a.requested_at = d.last_attempt_at AS same FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE a.delivery_id = $1',
        [c.deliveryId],
      );
      expect(same).toEqual({ same: true });
    }
    const [endpoint] = await t.sql<{ failing_since: Date | null; last_success_at: Date | null }>('SELECT failing_since, last_success_at FROM webhook_endpoints WHERE brand_id = $1', [brandId]);
    expect(endpoint).toMatchObject({ failing_since: null });
    expect(endpoint!.last_success_at).not.toBeNull();
  });

  it('an empty group runs no statement', async () => {
    expect(await finishSuccesses(t.runtime.deps.db, [])).toEqual([]);
    expect((await claimFirstAttempts(t.runtime.deps.db, [], await claimOpts())).size).toBe(0);
  });
});
