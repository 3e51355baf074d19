import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { claimDeliveries, finishAttempt, type ClaimedAttempt, type ClaimResult } from '../../server/domain/webhooks/delivery.ts';
import { readWebhookSettings } from '../../server/domain/webhooks/settings.ts';
import type { WebhookResponse } from '../../server/infra/http/outbound.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { attemptsOf, emitPaymentCompleted, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';

/**
 * The worker's claim (delivery.ts `claimDeliveries`) takes a whole batch of
 * wake-ups in one transaction, and decides each delivery of it as a claim of
 * that delivery alone would; `finishAttempt` records each sent attempt.
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

const claimed = (r: ClaimResult | undefined): ClaimedAttempt => {
  if (r?.kind !== 'claimed') throw new Error(`not claimed: ${JSON.stringify(r)}`);
  return r.claim;
};
const claimOpts = async () => ({ cipher: t.runtime.deps.crypto.pii, settings: await readWebhookSettings(t.runtime.deps.db) });

describe('claiming a batch', () => {
  it('decides each delivery of the batch: due ones claimed, the rest skipped, put off or dead-lettered', async () => {
    const a = await brandWithDeliveries(6);
    const off = await brandWithDeliveries(1);
    const [first, retrying, abandoned, notDue, locked, plain] = a.ids as [number, number, number, number, number, number];
    await t.sql(`UPDATE webhook_deliveries SET status = 'retrying', attempts = 1, first_attempt_at = now() - interval '1 minute', last_attempt_at = now() - interval '1 minute' WHERE id = $1`, [retrying]);
    await t.sql(`INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at) SELECT id, 1, url, 'failure', first_attempt_at FROM webhook_deliveries WHERE id = $1`, [retrying]);
    await t.sql(`UPDATE webhook_deliveries SET attempts = 1, first_attempt_at = now() - interval '1 minute', last_attempt_at = now() - interval '1 minute', lease_token = gen_random_uuid(), lease_until = now() - interval '1 second' WHERE id = $1`, [abandoned]);
    await t.sql(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`, [notDue]);
    await t.sql('UPDATE webhook_endpoints SET enabled = false WHERE brand_id = $1', [off.brandId]);
    // Another worker holds this one (its row lock) while we claim.
    const other = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await other.connect();
    await other.query('BEGIN');
    await other.query('SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [locked]);
    let claims: Map<number, ClaimResult>;
    try {
      claims = await claimDeliveries(t.runtime.deps.db, [...a.ids, ...off.ids, 999_999_999], await claimOpts());
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
    const claim = claimed(claims.get(first));
    expect(claim).toMatchObject({ deliveryId: first, attempt: 1, runAttempt: 1, url: receiver.url, event: 'payment.completed' });
    expect(claim.eventId).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(JSON.parse(claim.payload)).toMatchObject({ id: claim.eventId, event: 'payment.completed', data: { transaction_id: 1 } });
    expect(claim.secrets).toHaveLength(1);
    expect(claim.secrets[0]).toMatch(/^whsec_/);
    expect(claimed(claims.get(plain))).toMatchObject({ attempt: 1, runAttempt: 1 });
    // A retry: the second attempt of its run.
    expect(claimed(claims.get(retrying))).toMatchObject({ attempt: 2, runAttempt: 2 });
    // A lapsed lease: that attempt is recorded as abandoned, and it counts toward the run.
    expect(claimed(claims.get(abandoned))).toMatchObject({ attempt: 2, runAttempt: 2 });
    expect((await attemptsOf(t, abandoned))[0]).toMatchObject({ attempt: 1, outcome: 'abandoned' });
    expect(claims.get(notDue)).toMatchObject({ kind: 'later' });
    expect(claims.get(locked)).toEqual({ kind: 'skipped', reason: 'busy' });
    expect(claims.get(999_999_999)).toEqual({ kind: 'skipped', reason: 'missing' });
    expect(claims.get(off.ids[0]!)).toEqual({ kind: 'dead_letter', reason: 'endpoint disabled (merchant)' });

    const rows = await t.sql<{ id: string; status: string; attempts: number; lease_token: string | null; first_attempt_at: Date | null; last_attempt_at: Date | null }>(
      'SELECT id, status, attempts, lease_token, first_attempt_at, last_attempt_at FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id',
      [[...a.ids, ...off.ids]],
    );
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    expect(byId.get(first)).toMatchObject({ attempts: 1, lease_token: claim.leaseToken });
    expect(byId.get(first)!.first_attempt_at).toEqual(byId.get(first)!.last_attempt_at);
    expect(byId.get(notDue)).toMatchObject({ attempts: 0, lease_token: null, first_attempt_at: null });
    expect(byId.get(locked)).toMatchObject({ attempts: 0, lease_token: null });
    expect(byId.get(off.ids[0]!)).toMatchObject({ status: 'dead_letter', attempts: 0, lease_token: null });
    // Claimed again at once: every claimed one is now leased, the final one stays final.
    const again = await claimDeliveries(t.runtime.deps.db, [first, off.ids[0]!], await claimOpts());
    expect(again.get(first)).toEqual({ kind: 'skipped', reason: 'leased' });
    expect(again.get(off.ids[0]!)).toEqual({ kind: 'skipped', reason: 'final' });
  });

  it('claims nothing twice: a second batch over the same ids gets none of them', async () => {
    const { ids } = await brandWithDeliveries(3);
    const opts = await claimOpts();
    const [one, two] = await Promise.all([claimDeliveries(t.runtime.deps.db, ids, opts), claimDeliveries(t.runtime.deps.db, ids, opts)]);
    const won = (m: Map<number, ClaimResult>) => [...m].filter(([, r]) => r.kind === 'claimed').map(([id]) => id);
    expect(won(one).length + won(two).length).toBe(3);
    expect(won(one).filter((id) => won(two).includes(id))).toEqual([]);
  });

  it('an empty batch runs no statement', async () => {
    expect((await claimDeliveries(t.runtime.deps.db, [], await claimOpts())).size).toBe(0);
  });
});

describe('recording successes', () => {
  it('moves each delivery whose lease holds to success and logs every attempt; a delivery taken over is logged but left alone', async () => {
    const { brandId, ids } = await brandWithDeliveries(3);
    const opts = await claimOpts();
    const claims = await claimDeliveries(t.runtime.deps.db, ids, opts);
    const [c1, c2, c3] = ids.map((id) => claimed(claims.get(id))) as [ClaimedAttempt, ClaimedAttempt, ClaimedAttempt];
    // c3's lease lapsed and another worker took the delivery over.
    await t.sql('UPDATE webhook_deliveries SET lease_token = gen_random_uuid() WHERE id = $1', [c3.deliveryId]);
    await t.sql(`UPDATE webhook_endpoints SET failing_since = now() - interval '1 hour' WHERE brand_id = $1`, [brandId]);

    const applied = await Promise.all(
      ([[c1, ok(200)], [c2, ok(204)], [c3, ok(200)]] as const).map(async ([c, r]) => (await finishAttempt(t.runtime.deps.db, c, r, opts.settings)).applied),
    );
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
});
