import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/infra/database/embedded.ts';
import { bootstrap, type Runtime } from '../../server/bootstrap.ts';
import { createApp } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/infra/logger.ts';
import { answerClientErrors } from '../../server/http/client-errors.ts';
import { createApiKey, createBrand } from '../../server/domain/brands/service.ts';
import { databasePool, POOL_ACQUIRE_TIMEOUT_MS } from '../../server/infra/database/database.ts';
import { freePort } from '../support/global-setup.ts';
import { testRateLimits } from '../support/harness.ts';
import { requestAt } from '../support/second-instance.ts';
import { recordReliability } from '../support/reliability-summary.ts';

/**
 * The database restarted under load. This file runs its own PostgreSQL so it
 * can stop it: requests in flight and during the outage are answered with a 503
 * envelope, /readyz says why, and the service recovers by itself when the
 * database is back, with every acknowledged payment kept and none made twice.
 */
const OUTAGES = Number(process.env.FAULT_ROUNDS ?? 2);
const LOAD_WORKERS = Number(process.env.FAULT_LOAD ?? 12);
const OUTAGE_MS = 2500;

let dbDir: string;
let dataDir: string;
let port: number;
let password: string;
let db: EmbeddedPostgres;
let runtime: Runtime;
let server: Server;
let baseUrl: string;
let apiKey: string;
const logs: string[] = [];

async function startDb() {
  db = await startEmbeddedPostgres({ dataDir: dbDir, port, password, database: 'faults' });
}

beforeAll(async () => {
  dbDir = mkdtempSync(path.join(os.tmpdir(), 'pc-faults-pg-'));
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'pc-faults-data-'));
  port = await freePort();
  password = randomBytes(12).toString('hex');
  await startDb();
  const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: db.url, DATA_DIR: dataDir, PORT: '0', DATABASE_POOL_MAX: '5', LOG_LEVEL: 'info', ...testRateLimits });
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink });
  runtime = await bootstrap(config, logger);
  server = await new Promise((resolve) => {
    const srv = createApp(runtime.deps).listen(0, '127.0.0.1', () => resolve(srv));
  });
  answerClientErrors(server, logger);
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const em = runtime.deps.db;
  const brand = await createBrand(em, { name: 'Faults' });
  ({ key: apiKey } = await createApiKey(em, brand.id, { name: 'faults' }));
}, 180_000);

afterAll(async () => {
  const step = async (name: string, fn: () => Promise<unknown>) => {
    const started = Date.now();
    await fn();
    if (Date.now() - started > 2000) process.stdout.write(`[faults-database] teardown ${name} took ${Date.now() - started} ms\n`);
  };
  server?.closeAllConnections();
  await step('server', () => new Promise((r) => server?.close(r)));
  await step('runtime', async () => runtime?.close());
  await step('database', async () => db?.stop());
  rmSync(dbDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

interface Outcome {
  kind: 'read' | 'pay';
  reference?: string;
  status: number;
  code: string | null;
  ms: number;
}

/** Requests in a loop until `stop`: reads and idempotent payments, each with a hard client deadline. */
function load(stop: { done: boolean }, outcomes: Outcome[], workers = LOAD_WORKERS): Promise<void> {
  let n = 0;
  const one = async () => {
    while (!stop.done) {
      const pay = n++ % 2 === 0;
      const reference = pay ? `fault-${randomBytes(6).toString('hex')}` : undefined;
      const started = performance.now();
      try {
        const res = pay
          ? await fetch(`${baseUrl}/api/v1/payments`, {
              method: 'POST',
              headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': reference! },
              body: JSON.stringify({ amount: '10.00', currency: 'BDT', reference }),
              signal: AbortSignal.timeout(10_000),
            })
          : await fetch(`${baseUrl}/api/v1/brand`, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(10_000) });
        const body = (await res.json()) as { errors?: Array<{ code: string }> };
        outcomes.push({ kind: pay ? 'pay' : 'read', reference, status: res.status, code: body.errors?.[0]?.code ?? null, ms: performance.now() - started });
      } catch {
        outcomes.push({ kind: pay ? 'pay' : 'read', reference, status: 0, code: 'NO_ANSWER', ms: performance.now() - started });
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return Promise.all(Array.from({ length: workers }, one)).then(() => undefined);
}

/**
 * What a well-behaved client does after a failure: the same request with the
 * same key, again after Retry-After while the key is still held by the failed
 * attempt (released in the background once the database is back).
 */
async function retryPayment(reference: string) {
  const started = Date.now();
  for (;;) {
    const res = await requestAt(baseUrl, 'POST', '/api/v1/payments', {
      token: apiKey,
      headers: { 'idempotency-key': reference },
      body: { amount: '10.00', currency: 'BDT', reference },
    });
    const busy = res.status === 503 || (res.status === 409 && res.body.errors[0].code === 'IDEMPOTENCY_REQUEST_IN_PROGRESS');
    if (!busy || Date.now() - started > 20_000) return res;
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
}

async function waitUntil(predicate: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await predicate().catch(() => false)) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not within ${timeoutMs} ms`);
}

/** OUTAGES times: stop PostgreSQL under load, check readiness and the answers during the outage, start it, wait for recovery. */
async function outagesUnderLoad(outcomes: Outcome[], recoveries: number[]): Promise<void> {
  for (let i = 0; i < OUTAGES; i++) {
    await new Promise((r) => setTimeout(r, 800));
    await db.stop();
    const outageStart = outcomes.length;
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    const ready = await requestAt(baseUrl, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.data).toMatchObject({ status: 'not_ready', checks: { database: { status: 'error' } } });
    expect(ready.body.data.checks.database.error).not.toMatch(/postgres:\/\//);
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    const during = outcomes.slice(outageStart);
    expect(during.length).toBeGreaterThan(10);
    expect(during.filter((o) => o.status === 503).length).toBeGreaterThan(5);
    await startDb();
    recoveries.push(await waitUntil(async () => (await requestAt(baseUrl, 'GET', '/readyz')).status === 200, 30_000));
    await waitUntil(async () => (await requestAt(baseUrl, 'GET', '/api/v1/brand', { token: apiKey })).status === 200, 10_000);
  }
  await new Promise((r) => setTimeout(r, 800));
}

describe(`PostgreSQL restarted under load (${OUTAGES} outages)`, () => {
  it('fails fast with 503 envelopes, readyz reports it, recovers by itself, loses and doubles nothing', async () => {
    const outcomes: Outcome[] = [];
    const stop = { done: false };
    const running = load(stop, outcomes);
    const recoveries: number[] = [];
    try {
      await outagesUnderLoad(outcomes, recoveries);
    } finally {
      // Also on a failed assertion: the load must not outlive the test.
      stop.done = true;
      await running;
    }

    // No connection was lost for good: once idle, every pooled connection is back, and a burst is served at once.
    const pool = databasePool(runtime.deps.db);
    await waitUntil(async () => pool.totalCount === pool.idleCount && pool.waitingCount === 0, 5000);
    const burst = await Promise.all(Array.from({ length: 20 }, () => requestAt(baseUrl, 'GET', '/api/v1/brand', { token: apiKey })));
    expect(burst.map((r) => r.status)).toEqual(Array(20).fill(200));

    // Every answer is a success or the 503 envelope; none hung (each request has a client deadline).
    const unexpected = outcomes.filter((o) => !(o.status === 200 || o.status === 201 || (o.status === 503 && o.code === 'SERVICE_UNAVAILABLE')));
    expect(unexpected, JSON.stringify(unexpected)).toEqual([]);
    expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThan(0);

    // Nothing lost, nothing twice: retrying every payment with its key gives exactly one intent each.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const pays = outcomes.filter((o) => o.kind === 'pay');
      let lost = 0;
      for (const o of pays) {
        const retry = await retryPayment(o.reference!);
        expect(retry.status, JSON.stringify(retry.body)).toBe(201);
        if (o.status === 201) expect(retry.headers.get('idempotent-replayed')).toBe('true');
        const { rows } = await client.query('SELECT count(*)::int AS n FROM payment_intents WHERE reference = $1', [o.reference]);
        if (rows[0].n !== 1) lost++;
      }
      expect(lost).toBe(0);
      recordReliability({ suite: 'faults-database', faults: OUTAGES, lost });
      process.stdout.write(
        `[faults-database] ${OUTAGES} restarts, ${outcomes.length} requests (${outcomes.filter((o) => o.status === 503).length} answered 503, slowest failure ${Math.round(Math.max(...outcomes.filter((o) => o.status === 503).map((o) => o.ms)))} ms), recovered in ${recoveries.join(', ')} ms, ${pays.length} payments checked: none lost or doubled\n`,
      );
    } finally {
      await client.end();
    }
    expect(logs.some((l) => l.includes('"database unavailable"'))).toBe(true);
    expect(logs.join('\n')).not.toContain(password);
  }, 120_000);
});

describe('every pooled connection stuck (a lock held by someone else)', () => {
  it('requests beyond the pool wait at most the acquire timeout, answer 503, and the stuck ones finish once the lock goes', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE brands IN ACCESS EXCLUSIVE MODE');
      const lock = { held: true };
      // The pool has 5 connections: authentication of the first 5 blocks on the lock, holding them.
      const pending = Array.from({ length: 12 }, () =>
        fetch(`${baseUrl}/api/v1/brand`, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(30_000) }).then(async (r) => ({
          status: r.status,
          code: ((await r.json()) as { errors?: Array<{ code: string }> }).errors?.[0]?.code ?? null,
          whileLocked: lock.held,
        })),
      );
      await new Promise((r) => setTimeout(r, POOL_ACQUIRE_TIMEOUT_MS + 1500));
      lock.held = false;
      await locker.query('COMMIT');
      const results = await Promise.all(pending);
      const refused = results.filter((r) => r.status === 503);
      expect(refused.length).toBeGreaterThanOrEqual(7);
      for (const r of refused) {
        expect(r.code).toBe('SERVICE_UNAVAILABLE');
        // Refused by the acquire timeout, not served late: the answer came while the lock was still held.
        expect(r.whileLocked).toBe(true);
      }
      expect(results.filter((r) => r.status === 200).length).toBe(12 - refused.length);
      expect(results.every((r) => r.status === 200 || r.status === 503)).toBe(true);
      recordReliability({ suite: 'faults-database', faults: 1, lost: 0 });
    } finally {
      await locker.end();
    }
    expect((await requestAt(baseUrl, 'GET', '/api/v1/brand', { token: apiKey })).status).toBe(200);
  }, 60_000);
});
