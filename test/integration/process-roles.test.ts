import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileCacheEnv, startTestServer, testRateLimits, type TestContext } from '../support/harness.ts';
import { freePort } from '../support/global-setup.ts';
import { seedGateway } from '../support/seed.ts';
import { requestAt } from '../support/second-instance.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { MINUTE_SWEEPS_QUEUE } from '../../server/infra/jobs/scheduled.ts';
import { EXPIRE_INTENTS_SWEEP } from '../../server/domain/payments/expire-intents.job.ts';

/**
 * The deployment the README's "Running API and worker processes separately"
 * describes, for real: two `SERVICE_ROLE=api` and two `SERVICE_ROLE=worker`
 * Node processes (server/main.ts, as `npm start` runs it) over one fresh
 * database, and nothing else shared. Payments go in through both APIs;
 * webhooks reach a real receiver once per event; a sweep that both workers
 * are asked to run at the same moment does its work once; one API key's rate
 * limit is one budget across both APIs; a status stream open on one API hears
 * a change made through the other; each role's readiness says what it checks;
 * SIGTERM stops every process cleanly.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Per API key and minute: the rate-limit brand spends it across both APIs; the other brands stay below it. */
const KEY_LIMIT = 30;

interface Proc {
  name: string;
  role: 'api' | 'worker';
  url: string;
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

let t: TestContext;
let receiver: WebhookReceiver;
const procs: Proc[] = [];

async function startProcess(name: string, role: 'api' | 'worker'): Promise<Proc> {
  const port = await freePort();
  // The test run's own role settings must not leak into the children.
  const { WORKERS_ENABLED: _w, SERVICE_ROLE: _r, ...inherited } = process.env;
  const child = spawn(process.execPath, ['server/main.ts'], {
    cwd: ROOT,
    env: {
      ...inherited,
      ...testRateLimits,
      ...compileCacheEnv(),
      RATE_LIMIT_API_KEY: `${KEY_LIMIT}/60`,
      NODE_ENV: 'test',
      SERVICE_ROLE: role,
      DATABASE_URL: t.config.DATABASE_URL,
      // Every process reads the secrets the harness wrote there (PII keys, tokens): one service, several processes.
      DATA_DIR: t.config.DATA_DIR,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      DATABASE_POOL_MAX: '3',
      SHUTDOWN_TIMEOUT_MS: '5000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (c: Buffer) => output.push(...String(c).split('\n').filter(Boolean)));
  child.stderr!.on('data', (c: Buffer) => output.push(`[stderr] ${String(c)}`));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const proc: Proc = { name, role, url: `http://127.0.0.1:${port}`, child, output, exited };
  procs.push(proc);
  return proc;
}

async function started(p: Proc): Promise<void> {
  const until = Date.now() + 90_000;
  while (!p.output.some((l) => l.includes('"service started"'))) {
    if (p.child.exitCode !== null || Date.now() > until) throw new Error(`${p.name} did not start:\n${p.output.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const logLines = (p: Proc, msg: string) => p.output.filter((l) => l.includes(`"msg":"${msg}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);

let api1: Proc;
let api2: Proc;
let worker1: Proc;
let worker2: Proc;

beforeAll(async () => {
  // This file's database and secrets; its in-process server only seeds (WORKERS_ENABLED=false: the api role, no jobs).
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  await seedGateway(t, 'bkash');
  receiver = await startReceiver();
  [api1, api2, worker1, worker2] = await Promise.all([
    startProcess('api-1', 'api'),
    startProcess('api-2', 'api'),
    startProcess('worker-1', 'worker'),
    startProcess('worker-2', 'worker'),
  ]);
  await Promise.all(procs.map(started));
});

afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await receiver?.close();
  await t?.close();
});

const createPayment = async (api: Proc, apiKey: string, reference: string) => {
  const res = await requestAt(api.url, 'POST', '/api/v1/payments', {
    token: apiKey,
    headers: { 'idempotency-key': randomUUID() },
    body: { amount: '250.00', currency: 'BDT', reference },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.payment_id as string;
};

const addEndpoint = async (api: Proc, apiKey: string) => {
  const res = await requestAt(api.url, 'POST', '/api/v1/webhooks/endpoints', {
    token: apiKey,
    body: { url: receiver.url, events: ['payment.canceled', 'payment.expired'] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
};

describe('two api and two worker processes over one database', () => {
  it('each role reports its own readiness; a worker serves no public route', async () => {
    for (const api of [api1, api2]) {
      const ready = await requestAt(api.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.data).toMatchObject({ status: 'ready', role: 'api', checks: { database: { status: 'ok' } } });
      // An api process works no jobs: its readiness does not depend on the queue.
      expect(ready.body.data.checks.jobs).toBeUndefined();
    }
    for (const worker of [worker1, worker2]) {
      const ready = await requestAt(worker.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.data).toMatchObject({ status: 'ready', role: 'worker', checks: { database: { status: 'ok' }, jobs: { status: 'ok' } } });
      expect((await requestAt(worker.url, 'GET', '/healthz')).status).toBe(200);
      const api = await requestAt(worker.url, 'GET', '/api/v1/brand', { token: 'pk_live_whatever' });
      expect(api.status).toBe(404);
      expect(api.body).toMatchObject({ success: false, errors: [{ code: 'NOT_FOUND' }] });
      expect(logLines(worker, 'workers started')).toHaveLength(1);
    }
    for (const api of [api1, api2]) expect(logLines(api, 'workers started')).toHaveLength(0);
  });

  it('payments made through either api are one set; a status stream on one api hears a cancel made through the other; webhooks arrive once per event', async () => {
    const shop = await t.createBrand('Two-process shop');
    await addEndpoint(api1, shop.apiKey);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await createPayment(i % 2 ? api2 : api1, shop.apiKey, `two-proc-${i}`));
    // Each api reads what the other created.
    for (const [i, id] of ids.entries()) {
      const other = i % 2 ? api1 : api2;
      const read = await requestAt(other.url, 'GET', `/api/v1/payments/${id}`, { token: shop.apiKey });
      expect(read.status).toBe(200);
      expect(read.body.data).toMatchObject({ payment_id: id, status: 'pending' });
    }

    // The stream listens on api-1 (its own LISTEN connection); the cancel commits through api-2.
    const watched = ids[1]!;
    const abort = new AbortController();
    const stream = await fetch(`${api1.url}/api/checkout/v1/payments/${watched}/status-stream`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    const heard = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += Buffer.from(value).toString('utf8');
        if (/"status":"canceled"/.test(text)) return text;
      }
    })();
    // The first event is the status as it stands: subscribed before the change is made.
    await eventually(async () => /"status":"pending"/.test(text), 10_000, 'the stream\'s first event');
    const canceledAt = Date.now();
    const cancel = await requestAt(api2.url, 'POST', `/api/v1/payments/${watched}/cancel`, { token: shop.apiKey, headers: { 'idempotency-key': randomUUID() }, body: {} });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    const got = await Promise.race([heard, new Promise<string>((_, reject) => setTimeout(() => reject(new Error(`stream heard no cancel: ${text}`)), 10_000))]);
    expect(got).toMatch(/"status":"canceled"/);
    expect(Date.now() - canceledAt).toBeLessThan(5000);
    abort.abort();

    // Two more cancels, one through each api.
    for (const [api, id] of [[api1, ids[2]!], [api2, ids[3]!]] as const) {
      const res = await requestAt(api.url, 'POST', `/api/v1/payments/${id}/cancel`, { token: shop.apiKey, headers: { 'idempotency-key': randomUUID() }, body: {} });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const events = await t.sql<{ public_id: string }>("SELECT public_id FROM webhook_events WHERE brand_id = $1 AND event = 'payment.canceled'", [shop.brandId]);
    expect(events).toHaveLength(3);
    await receiver.waitFor((reqs) => events.every((e) => reqs.some((r) => r.headers['x-webhook-id'] === e.public_id)), 20_000);
    // Time for a second delivery by the other worker to show up, were there one.
    await new Promise((r) => setTimeout(r, 1500));
    for (const e of events) expect(receiver.requests.filter((r) => r.headers['x-webhook-id'] === e.public_id)).toHaveLength(1);
    const delivered = logLines(worker1, 'webhook attempt').length + logLines(worker2, 'webhook attempt').length;
    expect(delivered).toBe(receiver.requests.filter((r) => events.some((e) => e.public_id === r.headers['x-webhook-id'])).length);
    for (const api of [api1, api2]) expect(logLines(api, 'webhook attempt')).toHaveLength(0);
  });

  it('a sweep both workers are told to run at once expires each payment once, with one event and one delivery each', async () => {
    const shop = await t.createBrand('Expiry shop');
    await addEndpoint(api2, shop.apiKey);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await createPayment(i % 2 ? api2 : api1, shop.apiKey, `expiring-${i}`));
    // Their time is up (the clock moved on): the next expiry sweep finds them due.
    await t.sql("UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = ANY($1::uuid[])", [ids]);
    // Four runs at once, each under its own key so the queue keeps them all: both workers take one at the same time.
    const before = [worker1, worker2].map((w) => logLines(w, 'payment intent expiry sweep').length);
    await Promise.all([0, 1, 2, 3].map((i) => t.runtime.deps.boss.send(MINUTE_SWEEPS_QUEUE, { only: [EXPIRE_INTENTS_SWEEP] }, { singletonKey: `process-roles-${i}` })));
    const expired = await eventually(async () => {
      const rows = await t.sql<{ n: number }>("SELECT count(*)::int AS n FROM payment_intents WHERE uuid = ANY($1::uuid[]) AND status = 'expired'", [ids]);
      return rows[0]!.n === ids.length ? rows[0]!.n : null;
    }, 30_000, 'the payments to expire');
    expect(expired).toBe(8);
    const events = await t.sql<{ public_id: string }>("SELECT public_id FROM webhook_events WHERE brand_id = $1 AND event = 'payment.expired'", [shop.brandId]);
    expect(events).toHaveLength(8);
    await receiver.waitFor((reqs) => events.every((e) => reqs.some((r) => r.headers['x-webhook-id'] === e.public_id)), 20_000);
    // Every run finished (the minute schedule may have added one: it would find nothing left).
    await eventually(async () => {
      const rows = await t.sql<{ n: number }>("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND singleton_key LIKE 'process-roles-%' AND state = 'completed'", [MINUTE_SWEEPS_QUEUE]);
      return rows[0]!.n === 4;
    }, 20_000, 'all four sweep runs to complete');
    await new Promise((r) => setTimeout(r, 1500));
    for (const e of events) expect(receiver.requests.filter((r) => r.headers['x-webhook-id'] === e.public_id)).toHaveLength(1);
    // What the workers' sweeps expired adds up to the eight: none was expired twice.
    const swept = [worker1, worker2].map((w, i) => logLines(w, 'payment intent expiry sweep').slice(before[i]).reduce((a, l) => a + Number(l.expired_intents), 0));
    expect(swept[0]! + swept[1]!).toBe(8);
  });

  it("one API key's rate limit is one budget across both apis", async () => {
    const limited = await t.createBrand('Rate-limited shop');
    const statuses: number[] = [];
    // Alternating: each api alone sees 20 requests, under the limit of 30; together they are 40.
    for (let i = 0; i < 40; i++) statuses.push((await requestAt((i % 2 ? api2 : api1).url, 'GET', '/api/v1/brand', { token: limited.apiKey })).status);
    expect(statuses.slice(0, KEY_LIMIT).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(KEY_LIMIT)).toEqual(new Array(40 - KEY_LIMIT).fill(429));
  });

  it('SIGTERM stops each process cleanly: api processes stop serving, workers finish and stop', async () => {
    for (const p of procs) p.child.kill('SIGTERM');
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes).toEqual([0, 0, 0, 0]);
    for (const p of procs) {
      expect(p.output.join('\n')).toContain('shutdown complete');
      expect(p.output.filter((l) => l.startsWith('[stderr]'))).toEqual([]);
    }
  });
});

describe('a role other than all without DATABASE_URL', () => {
  it('is refused at start (exit 78, EX_CONFIG): the embedded database belongs to one process', async () => {
    const { WORKERS_ENABLED: _w, SERVICE_ROLE: _r, DATABASE_URL: _d, ...inherited } = process.env;
    for (const role of ['api', 'worker']) {
      const child = spawn(process.execPath, ['server/main.ts'], { cwd: ROOT, env: { ...inherited, ...compileCacheEnv(), SERVICE_ROLE: role, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (c: Buffer) => (err += String(c)));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(78);
      expect(err).toContain(`SERVICE_ROLE: ${role} needs DATABASE_URL`);
    }
  });
});
