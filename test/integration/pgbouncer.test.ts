import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { jobRegistrations } from '../../server/domain/jobs.ts';
import { startWorkers } from '../../server/infra/jobs/workers.ts';
import { createTestDatabase, startTestServer, type TestContext } from '../support/harness.ts';
import { pgbouncerBinary, startPgBouncer, type Bouncer } from '../support/pgbouncer.ts';
import { forwardSms, newGatewayTrxId, smsBodies, smsScene, submitAtCheckout, type SmsScene } from '../support/sms-matching.ts';
import { createPayment } from '../support/seed.ts';
import { startReceiver, verifyingResponder, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { fastSettings, writeSettings } from '../support/webhook-worker.ts';
import { waitFor } from '../support/wait.ts';
import { PAYMENT_STATUS_CHANNEL } from '../../server/domain/payments/status-notify.ts';

/**
 * The service behind a real PgBouncer in transaction pooling mode (README,
 * Behind PgBouncer): queries through the pooler (DATABASE_URL), what needs a
 * session of its own (migrations, pg-boss, LISTEN) on DATABASE_DIRECT_URL.
 * Named statements stay on only where PgBouncer keeps prepared statements
 * (1.21+ with max_prepared_statements). Skipped, saying why, only when PgBouncer
 * is neither installed nor installable (scripts/install-pgbouncer.sh).
 */

const binary = pgbouncerBinary();
if ('missing' in binary) process.stdout.write(`\nSKIPPED test/integration/pgbouncer.test.ts: ${binary.missing}\n`);

let bouncer: Bouncer;
let t: TestContext;
let workers: { stop(): Promise<void> } | null = null;
let receiver: WebhookReceiver;
let scene: SmsScene;
let secret: string;

describe.skipIf('missing' in binary)('behind PgBouncer in transaction mode', () => {
  beforeAll(async () => {
    if (!('path' in binary)) return;
    bouncer = await startPgBouncer(binary.path, inject('adminUrl'));
    const db = await createTestDatabase();
    const name = new URL(db.url).pathname.slice(1);
    t = await startTestServer(
      {
        DATABASE_URL: bouncer.url(name),
        DATABASE_DIRECT_URL: db.url,
        DATABASE_NAMED_STATEMENTS: bouncer.preparedStatements ? 'true' : 'false',
        WORKERS_ENABLED: 'false',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        RATE_LIMIT_PAIRING: 'off',
        RATE_LIMIT_DEVICE: 'off',
      },
      { database: db },
    );
    await writeSettings(t, fastSettings);
    workers = await startWorkers(t.runtime.deps, jobRegistrations());
    receiver = await startReceiver();
    scene = await smsScene(t);
    const res = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: scene.apiKey, body: { url: receiver.url, events: ['payment.completed'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    secret = res.body.data.secret;
    receiver.respond = verifyingResponder(() => secret);
  }, 120_000);

  afterAll(async () => {
    await workers?.stop();
    await t?.close();
    await receiver?.close();
    await bouncer?.close();
  });

  it('sends its queries through the pooler, and is ready', async () => {
    const name = new URL(t.config.DATABASE_URL!).pathname.slice(1);
    const before = await bouncer.stats(name);
    const list = await t.request('GET', '/api/v1/payments', { token: scene.apiKey });
    expect(list.status).toBe(200);
    const after = await bouncer.stats(name);
    expect(after.queries).toBeGreaterThan(before.queries);
    const ready = await t.request('GET', '/readyz');
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);
  });

  it('creates payments, concurrently and idempotently, and lists them', async () => {
    const created = await Promise.all(Array.from({ length: 12 }, (_, i) => createPayment(t, scene.apiKey, { amount: `${100 + i}.00`, reference: `bouncer-${i}` })));
    expect(new Set(created.map((c) => c.payment_id)).size).toBe(12);
    const body = { amount: '250.00', currency: 'BDT', reference: 'bouncer-idem' };
    const headers = { 'idempotency-key': 'bouncer-idem-1' };
    const first = await t.request('POST', '/api/v1/payments', { token: scene.apiKey, body, headers });
    const again = await t.request('POST', '/api/v1/payments', { token: scene.apiKey, body, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.payment_id).toBe(first.body.data.payment_id);
    const list = await t.request('GET', '/api/v1/payments?per_page=100&reference=bouncer-idem', { token: scene.apiKey });
    expect(list.body.data.map((p: { payment_id: string }) => p.payment_id)).toEqual([first.body.data.payment_id]);
  });

  it('takes an SMS that completes a payment, and delivers the signed webhook once', async () => {
    const payment = await createPayment(t, scene.apiKey, { amount: '711.00' });
    const trxId = newGatewayTrxId();
    const transaction = await submitAtCheckout(t, payment.payment_id, { gateway: scene.gateway, gatewayTrxId: trxId });
    const answers = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('711.00', trxId) }]);
    expect(answers[0]!.match_status).toBe('matched');
    const [event] = await t.sql<{ public_id: string }>(`SELECT public_id FROM webhook_events WHERE transaction_id = $1 AND event = 'payment.completed'`, [transaction.id]);
    expect(event).toBeDefined();
    await receiver.waitFor((reqs) => reqs.some((r) => r.rawBody.includes(event!.public_id) && r.status === 200));
    expect(receiver.requests.filter((r) => r.rawBody.includes(event!.public_id) && r.status === 200)).toHaveLength(1);
    const status = async () =>
      (await t.sql<{ status: string }>('SELECT d.status FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.public_id = $1', [event!.public_id]))[0]?.status;
    expect(await waitFor(status, (s) => s !== 'pending')).toBe('success');
  });

  it('tells a status stream\'s LISTEN about a payment\'s change: the listener is on the direct connection', async () => {
    const payment = await createPayment(t, scene.apiKey, { amount: '120.00' });
    const [intent] = await t.sql<{ id: string }>('SELECT id FROM payment_intents WHERE uuid = $1', [payment.payment_id]);
    let notified = 0;
    const subscription = await t.runtime.deps.notifications.subscribe(PAYMENT_STATUS_CHANNEL, String(intent!.id), { onNotify: () => notified++, onClose: () => undefined });
    try {
      const cancelled = await t.request('POST', `/api/v1/payments/${payment.payment_id}/cancel`, { token: scene.apiKey });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      expect(await waitFor(async () => notified, (n) => n > 0, 5000)).toBeGreaterThan(0);
    } finally {
      subscription.unsubscribe();
    }
  });
});
