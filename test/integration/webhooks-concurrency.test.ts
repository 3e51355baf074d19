import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDelivery } from '../../server/domain/webhooks/delivery.ts';
import { readWebhookSettings } from '../../server/domain/webhooks/settings.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { deliveriesOf, emitPaymentCompleted, fastSettings, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';

const WORKER = path.resolve(import.meta.dirname, '../support/webhook-worker-process.ts');

let server: WebhookTestServer;
let t: TestContext;
let receiver: WebhookReceiver;
/** The claim race's endpoint: its claimed, never-sent delivery is retried once its lease expires, so it must not reach `receiver`. */
let raceReceiver: WebhookReceiver;
let child: ChildProcess | null = null;
const inFlight = new Map<string, number>();
let maxConcurrentSameId = 0;

beforeAll(async () => {
  server = await startWebhookTestServer({ ...fastSettings, webhook_worker_batch_size: 5, webhook_worker_concurrency: 2 });
  t = server.t;
  receiver = await startReceiver();
  raceReceiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await receiver?.close();
  await raceReceiver?.close();
  await server?.close();
});

describe('several workers on one database', () => {
  it('racing claims on one delivery: exactly one wins', async () => {
    const { brandId, apiKey } = await t.createBrand();
    await server.stopWorkers();
    try {
      await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { url: raceReceiver.url, events: ['payment.completed'] } });
      await emitPaymentCompleted(t, brandId, 1);
      const [delivery] = await deliveriesOf(t, brandId);
      const settings = await readWebhookSettings(t.runtime.deps.db);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => claimDelivery(t.runtime.deps.db, Number(delivery!.id), { cipher: t.runtime.deps.crypto.pii, settings })),
      );
      expect(results.filter((r) => r.kind === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'skipped').map((r) => (r as { reason: string }).reason).every((r) => r === 'busy' || r === 'leased')).toBe(true);
      const [row] = await t.sql<{ attempts: number; lease_token: string | null }>('SELECT attempts, lease_token FROM webhook_deliveries WHERE id = $1', [delivery!.id]);
      expect(row!.attempts).toBe(1);
      expect(row!.lease_token).not.toBeNull();
    } finally {
      await server.startWorkers();
    }
  });

  it('two processes consuming one queue deliver each event once, never the same one at the same time', async () => {
    const { brandId, apiKey } = await t.createBrand();
    receiver.respond = (req) => {
      const id = String(req.headers['x-webhook-id']);
      const now = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, now);
      maxConcurrentSameId = Math.max(maxConcurrentSameId, now);
      return new Promise((resolve) =>
        setTimeout(() => {
          inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
          resolve({ status: 200 });
        }, 100),
      );
    };
    await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { url: receiver.url, events: ['payment.completed'] } });
    child = spawn(process.execPath, [WORKER], {
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: t.config.DATABASE_URL, DATA_DIR: t.config.DATA_DIR, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', DATABASE_POOL_MAX: '5' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: string[] = [];
    child.stdout!.on('data', (c: Buffer) => out.push(String(c)));
    await eventually(async () => out.join('').includes('"workers started"'), 30_000, 'second worker ready');

    const before = receiver.requests.length;
    const EVENTS = 60;
    for (let i = 1; i <= EVENTS; i++) await emitPaymentCompleted(t, brandId, 100 + i);
    await eventually(async () => {
      const rows = await deliveriesOf(t, brandId);
      return rows.length === EVENTS && rows.every((r) => r.status === 'success');
    }, 60_000, 'all delivered');
    const mine = receiver.requests.slice(before);
    expect(mine).toHaveLength(EVENTS);
    expect(new Set(mine.map((r) => r.headers['x-webhook-id'])).size).toBe(EVENTS);
    expect(maxConcurrentSameId).toBe(1);
    // Both processes did part of the work.
    const childAttempts = out.join('').split('\n').filter((l) => l.includes('"webhook attempt"')).length;
    expect(childAttempts).toBeGreaterThan(0);
    expect(childAttempts).toBeLessThan(EVENTS);
  }, 120_000);
});
