import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testRateLimits, type TestContext } from '../support/harness.ts';
import { freePort } from '../support/global-setup.ts';
import { DEVICE_API } from '../support/device.ts';
import { newGatewayTrxId, seedPayment, smsBodies, smsScene, type SmsScene } from '../support/sms-matching.ts';
import { requestAt } from '../support/second-instance.ts';
import { recordReliability } from '../support/reliability-summary.ts';
import { runPendingSmsSweep } from '../../server/domain/sms/matching/match-pending-sms.job.ts';

/**
 * The server process killed with SIGKILL while it matches a batch of forwarded
 * SMS. After a restart, with the phone retrying its batch as it does after a
 * dropped connection, every SMS is stored once, every payment is completed
 * exactly once with exactly one payment.completed event, and nothing is left
 * pending once the matching sweep has run. (The same for webhook delivery:
 * webhooks-worker-crash.)
 */
const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 2);
const BATCH = 40;
const ROOT = path.resolve(import.meta.dirname, '../..');

let t: TestContext;
let port: number;
let child: ChildProcess | null = null;
let childOutput: string[] = [];

/** The real server entry point on this file's database, sharing DATA_DIR (so the secrets and device tokens are the same). */
async function startServerProcess(): Promise<void> {
  childOutput = [];
  const proc = spawn(process.execPath, ['server/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...testRateLimits,
      NODE_ENV: 'test',
      DATABASE_URL: t.config.DATABASE_URL,
      DATA_DIR: t.config.DATA_DIR,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_POOL_MAX: '5',
      WORKERS_ENABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  proc.stdout!.on('data', (c: Buffer) => childOutput.push(...String(c).split('\n').filter(Boolean)));
  proc.stderr!.on('data', (c: Buffer) => childOutput.push(`[stderr] ${String(c)}`));
  const started = Date.now();
  while (!childOutput.some((l) => l.includes('"service started"'))) {
    if (proc.exitCode !== null || Date.now() - started > 60_000) throw new Error(`server did not start: ${childOutput.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function kill(): Promise<void> {
  const proc = child!;
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

beforeAll(async () => {
  // The in-process server only seeds and reads; its workers stay off so the child's sweep is the one that runs.
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  port = await freePort();
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) await kill();
  await t?.close();
});

async function counts(ids: number[]) {
  const [row] = await t.sql<{ completed: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM transactions WHERE id = ANY($1) AND status = 'completed') AS completed,
            (SELECT count(*)::int FROM webhook_events WHERE transaction_id = ANY($1) AND event = 'payment.completed') AS events`,
    [ids],
  );
  return row!;
}

describe(`SIGKILL while matching forwarded SMS (${ROUNDS} rounds)`, () => {
  it('after a restart and the phone retrying, every payment completes exactly once and no SMS is lost or stored twice', async () => {
    const scene: SmsScene = await smsScene(t);
    let midBatchKills = 0;
    let lost = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await startServerProcess();
      const payments = [];
      for (let i = 0; i < BATCH; i++) {
        const amount = `${1000 + round * BATCH + i}.00`;
        const trxId = newGatewayTrxId();
        const { transaction } = await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: trxId });
        payments.push({ id: transaction.id, amount, trxId });
      }
      const ids = payments.map((p) => p.id);
      const messages = payments.map((p, i) => ({ device_message_id: `crash-${round}-${i}`, sender: 'bKash', body: smsBodies.bkash(p.amount, p.trxId), received_at: new Date().toISOString() }));
      const base = `http://127.0.0.1:${port}`;

      const forwarding = requestAt(base, 'POST', `${DEVICE_API}/sms/messages`, { token: scene.device.accessToken, body: { messages } }).catch((err: Error) => err);
      // Kill as soon as matching has begun and before it ends. A request's SMS are decided in one transaction
      // (docs/matching.md, section 10), so no payment shows completed before all do: matching has begun once the
      // batch is stored (its records pending) or its payments complete.
      const storedCount = async () =>
        (await t.sql<{ n: number }>("SELECT count(*)::int AS n FROM sms_records WHERE device_message_id LIKE $1", [`crash-${round}-%`]))[0]!.n;
      for (let polls = 0; polls < 5000 && (await storedCount()) < BATCH && (await counts(ids)).completed === 0; polls++) await new Promise((r) => setTimeout(r, 2));
      await kill();
      const answer = await forwarding;
      const atKill = (await counts(ids)).completed;
      if (atKill < BATCH && answer instanceof Error) midBatchKills++;

      await startServerProcess();
      // The phone never got an answer: it sends the same batch again.
      const retry = await requestAt(base, 'POST', `${DEVICE_API}/sms/messages`, { token: scene.device.accessToken, body: { messages } });
      expect(retry.status).toBe(200);
      expect(retry.body.data).toHaveLength(BATCH);
      // What the scheduled sweep does a minute later, run now.
      await runPendingSmsSweep(t.runtime.deps, { minAgeSeconds: 0 });

      const stored = await t.sql<{ device_message_id: string; match_status: string; n: number }>(
        `SELECT device_message_id, min(match_status) AS match_status, count(*)::int AS n FROM sms_records
          WHERE device_id = $1 AND device_message_id LIKE $2 GROUP BY device_message_id`,
        [scene.device.deviceId, `crash-${round}-%`],
      );
      expect(stored, `round ${round}`).toHaveLength(BATCH);
      expect(stored.every((s) => s.n === 1 && s.match_status === 'matched')).toBe(true);
      const after = await counts(ids);
      expect(after).toEqual({ completed: BATCH, events: BATCH });
      const perTransaction = await t.sql<{ n: number }>(
        "SELECT count(*)::int AS n FROM sms_records WHERE transaction_id = ANY($1) AND match_status = 'matched' GROUP BY transaction_id",
        [ids],
      );
      expect(perTransaction.every((r) => r.n === 1)).toBe(true);
      lost += BATCH - after.completed;
      await kill();
    }
    expect(midBatchKills, 'at least one kill landed in the middle of a batch').toBeGreaterThan(0);
    recordReliability({ suite: 'faults-crash', faults: ROUNDS, lost });
    process.stdout.write(`[faults-crash] ${ROUNDS} SIGKILLs during SMS matching (${midBatchKills} mid-batch), ${ROUNDS * BATCH} payments: each completed once\n`);
  }, 240_000);
});
