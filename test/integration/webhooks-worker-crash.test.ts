import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { emitPaymentCompleted, fastSettings, writeSettings } from '../support/webhook-worker.ts';

const EVENTS = 40;
const WORKER = path.resolve(import.meta.dirname, '../support/webhook-worker-process.ts');

let t: TestContext;
let receiver: WebhookReceiver;
const children: ChildProcess[] = [];

/** A real worker process on this test's database; resolves once it consumes. */
async function startWorkerProcess(name: string): Promise<{ child: ChildProcess; output: string[] }> {
  const child = spawn(process.execPath, [WORKER], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: t.config.DATABASE_URL,
      // Same DATA_DIR, same secrets: the worker must decrypt the endpoint's signing secret.
      DATA_DIR: t.config.DATA_DIR,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      DATABASE_POOL_MAX: '5',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const output: string[] = [];
  child.stdout!.on('data', (c: Buffer) => output.push(...String(c).split('\n').filter(Boolean)));
  child.stderr!.on('data', (c: Buffer) => output.push(`[${name} stderr] ${String(c)}`));
  await eventually(async () => output.some((l) => l.includes('"workers started"')) || child.exitCode !== null, 30_000, `${name} ready`);
  if (child.exitCode !== null) throw new Error(`${name} exited: ${output.join('\n')}`);
  return { child, output };
}

const counts = () =>
  t.sql<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status ORDER BY status');

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  // A slow receiver keeps deliveries in flight when the worker dies.
  receiver = await startReceiver(() => ({ status: 200, body: 'ok', delayMs: 400 }));
  await writeSettings(t, { ...fastSettings, webhook_max_attempts: 10, webhook_timeout_ms: 3000, webhook_worker_batch_size: 4, webhook_worker_concurrency: 2 });
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await receiver?.close();
  await t?.close();
});

describe('a worker killed in the middle of a delivery run', () => {
  it('loses nothing: after a new worker starts every event is delivered at least once', async () => {
    const { brandId, apiKey } = await t.createBrand('Crash Brand');
    const put = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { url: receiver.url, events: ['payment.completed'] } });
    expect(put.status).toBe(201);
    for (let i = 1; i <= EVENTS; i++) await emitPaymentCompleted(t, brandId, i);
    const eventIds = (await t.sql<{ public_id: string }>('SELECT public_id FROM webhook_events WHERE brand_id = $1', [brandId])).map((r) => r.public_id);
    expect(eventIds).toHaveLength(EVENTS);

    const first = await startWorkerProcess('worker-1');
    await receiver.waitFor((reqs) => reqs.length >= 10, 30_000);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    const inFlightAtKill = receiver.requests.filter((r) => r.status === 0).length;
    const leased = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE lease_token IS NOT NULL');
    const delivered = (await counts()).find((c) => c.status === 'success')?.n ?? 0;
    // The kill really was mid-run: some sent and recorded, some claimed and unfinished, some not started.
    expect(delivered).toBeGreaterThan(0);
    expect(delivered).toBeLessThan(EVENTS);
    expect(inFlightAtKill).toBeGreaterThan(0);
    expect(leased[0]!.n).toBeGreaterThan(0);

    await startWorkerProcess('worker-2');
    await eventually(async () => {
      const c = await counts();
      return c.length === 1 && c[0]!.status === 'success' && c[0]!.n === EVENTS;
    }, 60_000, 'all deliveries succeeded');

    const received = receiver.distinctIds();
    expect(received.size).toBe(EVENTS);
    expect([...received].sort()).toEqual([...eventIds].sort());
    expect(receiver.requests.length).toBeGreaterThanOrEqual(EVENTS);
    // The attempts the dead worker never finished are on record as abandoned, not silently lost.
    const abandoned = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_attempts WHERE outcome = 'abandoned'`);
    expect(abandoned[0]!.n).toBe(leased[0]!.n);
  }, 120_000);
});
