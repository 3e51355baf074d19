import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedTransaction } from '../support/seed.ts';
import { EXPIRE_INTENTS_SWEEP } from '../../server/domain/payments/expire-intents.job.ts';
import { MINUTE_SWEEPS_QUEUE, runMinuteSweepsNow } from '../../server/infra/jobs/scheduled.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { PURGE_IDEMPOTENCY_KEYS_QUEUE } from '../../server/domain/idempotency/purge-idempotency-keys.job.ts';
import { waitFor } from '../support/wait.ts';

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'true' });
  ({ apiKey } = await t.createBrand('Jobs Shop'));
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

describe('payment background jobs run through the job queue', () => {
  it('intent expiry runs every minute (with the other minute sweeps), the idempotency purge hourly', async () => {
    const schedules = await t.runtime.deps.boss.getSchedules();
    const mine = schedules.filter((s) => [MINUTE_SWEEPS_QUEUE, PURGE_IDEMPOTENCY_KEYS_QUEUE].includes(s.name)).map((s) => [s.name, s.cron]);
    expect(mine.sort()).toEqual(
      [
        [MINUTE_SWEEPS_QUEUE, '* * * * *'],
        [PURGE_IDEMPOTENCY_KEYS_QUEUE, '17 * * * *'],
      ].sort(),
    );
  });

  it('an expiry job expires due intents with their open transactions and records payment.expired', async () => {
    const bare = await createPayment(t, apiKey);
    const open = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification' });
    const later = await createPayment(t, apiKey);
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = ANY($1::uuid[])`, [[bare.payment_id, open.paymentId]]);
    await runMinuteSweepsNow(t.runtime.deps.boss, [EXPIRE_INTENTS_SWEEP]);
    const statuses = async () =>
      (await t.sql<{ uuid: string; status: string }>('SELECT uuid::text, status FROM payment_intents WHERE uuid = ANY($1::uuid[]) ORDER BY uuid', [
        [bare.payment_id, open.paymentId, later.payment_id],
      ])).map((r) => `${r.uuid}:${r.status}`);
    const expected = [`${bare.payment_id}:expired`, `${open.paymentId}:expired`, `${later.payment_id}:pending`].sort();
    expect(await waitFor(statuses, (v) => JSON.stringify(v) === JSON.stringify(expected))).toEqual(expected);
    expect((await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [open.transaction.id]))[0]!.status).toBe('expired');
    const events = await t.sql<{ n: string }>(
      `SELECT count(*) AS n FROM webhook_events WHERE event = 'payment.expired' AND (payload::jsonb)->'data'->>'payment_id' = ANY($1::text[])`,
      [[bare.payment_id, open.paymentId]],
    );
    expect(events[0]!.n).toBe('2');
  });

  it('a purge job deletes idempotency keys past 24 hours', async () => {
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '10.00', currency: 'BDT' }, headers: { 'idempotency-key': 'purge-me' } });
    expect(res.status).toBe(201);
    await t.sql(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'purge-me'`);
    await t.runtime.deps.boss.send(PURGE_IDEMPOTENCY_KEYS_QUEUE, {});
    const left = await waitFor(
      async () => (await t.sql(`SELECT 1 FROM idempotency_keys WHERE key = 'purge-me'`)).length,
      (n) => n === 0,
    );
    expect(left).toBe(0);
  });
});
