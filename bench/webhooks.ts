import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { recordEvent } from '../server/domain/webhooks/outbox.ts';
import { readWebhookSettings } from '../server/domain/webhooks/settings.ts';
import { DELIVER_QUEUE } from '../server/domain/webhooks/queue.ts';
import { startBoss } from '../server/infra/jobs/boss.ts';
import { prepareJobs } from '../server/infra/jobs/workers.ts';
import { jobRegistrations } from '../server/domain/jobs.ts';
import { createLogger } from '../server/infra/logger.ts';
import { withScope, type Benchmark } from './lib/benchmark.ts';
import type { statementStats } from './lib/database.ts';
import { round1, sampleRss, startChild, type BenchChild, type RssSample } from './lib/processes.ts';
import { ratio, type Row } from './lib/report.ts';
import { seedBrands, seedWebhookEndpoint, withPool, type SeededBrand } from './lib/seed.ts';
import { startOurs } from './lib/servers.ts';
import { heapOf } from './lib/compare.ts';
import { transaction } from '../server/domain/db.ts';

/**
 * Webhook delivery. Throughput: a backlog of `payment.completed` deliveries
 * (events, delivery rows and, for ours, their pg-boss wake-ups) spread over the
 * brands' endpoints is drained into a local receiver that verifies every
 * signature; the rate is read off the receiver's arrival clock, and every
 * delivery must end `success` with its attempt row. Latency: on the idle
 * system, single events recorded one at a time (ours through recordEvent in
 * a transaction, as a state change does), from commit to the receiver.
 * Baseline: bench/servers/baseline-webhooks.ts (pg + undici, batched claims,
 * LISTEN/NOTIFY). Targets (BENCHMARKS.md, Summary): >= 1,000 deliveries/s sustained, median
 * latency <= 250 ms.
 */

const now = () => performance.timeOrigin + performance.now();

function paymentData(n: number): Record<string, unknown> {
  const at = new Date().toISOString();
  const amount = `${1000 + (n % 9000)}.00`;
  return {
    object: 'transaction', id: n, transaction_id: n, trx_id: `TRX${n.toString(16).toUpperCase().padStart(16, '0')}`, gateway_trx_id: `B${n.toString(16).toUpperCase().padStart(9, '0')}`,
    amount, currency: 'BDT', fee: '18.50', status: 'completed', gateway: 'bkash', method: 'send_money', exchange_rate: null, failure_reason: null,
    created_at: at, completed_at: at, payment_id: randomUUID(), reference: `order-${n}`, requested_amount: amount, requested_currency: 'BDT', expires_at: at,
    metadata: { order_id: String(n), channel: 'web' },
  };
}

/** `count` pending deliveries round-robin over the brands' endpoints, written set-based; returns their ids. */
export async function seedDeliveries(pool: pg.Pool, brands: readonly SeededBrand[], count: number, offset: number): Promise<number[]> {
  const ids: number[] = [];
  for (let start = 0; start < count; start += 5000) {
    const n = Math.min(5000, count - start);
    const publicIds: string[] = [];
    const brandIds: number[] = [];
    const payloads: string[] = [];
    for (let i = 0; i < n; i++) {
      const k = offset + start + i;
      const id = `evt_${randomUUID().replaceAll('-', '')}`;
      publicIds.push(id);
      brandIds.push(brands[k % brands.length]!.id);
      payloads.push(JSON.stringify({ id, event: 'payment.completed', created_at: new Date().toISOString(), data: paymentData(k) }));
    }
    const { rows } = await pool.query<{ id: string }>(
      `WITH ev AS (
         INSERT INTO webhook_events (public_id, brand_id, event, payload, created_at)
         SELECT p, b, 'payment.completed', pl, now() FROM unnest($1::text[], $2::bigint[], $3::text[]) AS u(p, b, pl) RETURNING id, brand_id
       )
       INSERT INTO webhook_deliveries (event_id, endpoint_id, brand_id, url, status, next_attempt_at)
       SELECT ev.id, ep.id, ev.brand_id, ep.url, 'pending', now() FROM ev JOIN webhook_endpoints ep ON ep.brand_id = ev.brand_id
       RETURNING id`,
      [publicIds, brandIds, payloads],
    );
    ids.push(...rows.map((r) => Number(r.id)));
  }
  return ids;
}

interface ReceiverStats {
  received: number;
  distinct: number;
  badSignatures: number;
  duplicates: number;
  firstAt: number | null;
  lastAt: number | null;
  arrivals: Record<string, number>;
  arrivalTimes: number[];
}

async function stats(receiver: BenchChild, ids?: string[]): Promise<ReceiverStats> {
  receiver.send({ type: 'stats', ...(ids ? { ids } : {}) });
  return receiver.message<ReceiverStats>('stats', 30_000);
}

async function reset(receiver: BenchChild): Promise<void> {
  receiver.send({ type: 'reset' });
  await receiver.message('reset-done');
}

interface Drain {
  deliveries: number;
  overallPerSecond: number;
  /** Between the 10th and 90th percentile arrivals: the steady state, without start-up and tail. */
  sustainedPerSecond: number;
  seconds: number;
  badSignatures: number;
  duplicates: number;
  succeeded: number;
  attemptsLogged: number;
  rss: RssSample;
}

async function drain(receiver: BenchChild, pool: pg.Pool, deliveryIds: number[], pid: number, timeoutMs: number): Promise<Drain> {
  const rss = sampleRss(pid);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await stats(receiver, []);
    if (s.distinct >= deliveryIds.length) break;
    if (Date.now() > until) throw new Error(`only ${s.distinct} of ${deliveryIds.length} deliveries arrived within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const rssFigures = rss.stop();
  const s = await stats(receiver);
  const times = [...s.arrivalTimes].sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * (times.length - 1)))]!;
  const seconds = (s.lastAt! - s.firstAt!) / 1000;
  // The finishing transactions may still be committing when the last request lands.
  await new Promise((r) => setTimeout(r, 1000));
  const [{ succeeded, attempts }] = (
    await pool.query<{ succeeded: number; attempts: number }>(
      `SELECT count(*) FILTER (WHERE d.status = 'success')::int AS succeeded,
              (SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = ANY($1::bigint[]) AND a.outcome = 'success') AS attempts
         FROM webhook_deliveries d WHERE d.id = ANY($1::bigint[])`,
      [deliveryIds],
    )
  ).rows as [{ succeeded: number; attempts: number }];
  return {
    deliveries: s.distinct,
    overallPerSecond: round1(s.distinct / Math.max(seconds, 0.001)),
    sustainedPerSecond: round1((0.8 * times.length) / Math.max((at(0.9) - at(0.1)) / 1000, 0.001)),
    seconds: round1(seconds),
    badSignatures: s.badSignatures,
    duplicates: s.duplicates,
    succeeded,
    attemptsLogged: attempts,
    rss: rssFigures,
  };
}

/** Records `count` single events 250 ms apart; `record` resolves with the event id and its commit time. Returns commit -> arrival in ms. */
async function latencies(receiver: BenchChild, count: number, record: (n: number) => Promise<{ id: string; committedAt: number }>): Promise<number[]> {
  const committed = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const { id, committedAt } = await record(i);
    committed.set(id, committedAt);
    await new Promise((r) => setTimeout(r, 250));
  }
  const until = Date.now() + 30_000;
  for (;;) {
    const s = await stats(receiver, [...committed.keys()]);
    if (Object.keys(s.arrivals).length === committed.size) return [...committed].map(([id, t]) => s.arrivals[id]! - t);
    if (Date.now() > until) throw new Error(`${committed.size - Object.keys(s.arrivals).length} latency samples never arrived`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** With --statements: what the drain ran per delivery (start-up statements included, a few per thousand). */
async function statementsPerDelivery(stats: ReturnType<typeof statementStats> | undefined, deliveries: number, side: string) {
  if (!stats) return undefined;
  const all = await stats.read();
  const top = all.slice(0, 30).map((q) => ({ query: q.query, perDelivery: Math.round((q.calls / deliveries) * 100) / 100, totalMs: q.totalMs }));
  console.log(`  ${side}: ${top.reduce((a, q) => a + q.perDelivery, 0).toFixed(2)} statements per delivery, ${all.reduce((a, q) => a + q.totalMs, 0)} ms executing in PostgreSQL`);
  for (const q of top.filter((x) => x.perDelivery >= 0.005)) console.log(`    ${q.perDelivery.toFixed(3).padStart(7)} ${String(q.totalMs).padStart(7)} ms  ${q.query}`);
  return top;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? round1(s[Math.min(s.length - 1, Math.floor(q * (s.length - 1)))]!) : null;
};

export const webhooks: Benchmark = {
  name: 'webhooks',
  description: 'signed webhook deliveries drained to a local receiver, and commit -> receiver latency when idle',
  run: (opts) =>
    withScope('webhooks', opts, async ({ db, secrets, defer, stats }) => {
      const backlog = opts.quick ? 300 : 30_000;
      const samples = opts.quick ? 3 : 40;
      const receiver = startChild('receiver', 'bench/servers/receiver.ts');
      defer(() => receiver.stop());
      const { port } = await receiver.message<{ port: number }>('ready');
      const sql = new pg.Pool({ connectionString: db.url, max: 4 });
      defer(() => sql.end());

      const brands = await withPool(db.url, (p) => seedBrands(p, opts.quick ? 4 : 100));
      const endpointSecrets: Record<string, string> = {};
      for (const [i, b] of brands.entries()) {
        endpointSecrets[`/hooks/${i}`] = await seedWebhookEndpoint(db.db, secrets.keys, b.id, `http://127.0.0.1:${port}/hooks/${i}`);
      }
      receiver.send({ type: 'secrets', secrets: endpointSecrets });
      await receiver.message('secrets-set');
      const oursBrands = brands.slice(0, brands.length / 2);
      const baselineBrands = brands.slice(brands.length / 2);

      // pg-boss bound to the seeding ORM: recordEvent enqueues through it, as a state change in the service does.
      const boss = await startBoss({ url: db.url, logger: createLogger({ level: 'silent' }) });
      defer(() => boss.stop({ graceful: false, close: true }));
      await prepareJobs({ db: db.db, boss }, jobRegistrations());

      // Ours: the backlog with one wake-up job per delivery (as the outbox writes them), then the server starts and drains it.
      const oursIds = await seedDeliveries(sql, oursBrands, backlog, 0);
      for (let i = 0; i < oursIds.length; i += 1000) {
        await boss.insert(DELIVER_QUEUE, oursIds.slice(i, i + 1000).map((id) => ({ data: { deliveryId: id }, singletonKey: `delivery:${id}` })));
      }
      // Experiments: worker settings in the settings table, as an operator would set them,
      // e.g. BENCH_WEBHOOK_SETTINGS='{"webhook_worker_batch_size":50,"webhook_worker_concurrency":4}'.
      const tuned = process.env.BENCH_WEBHOOK_SETTINGS ? (JSON.parse(process.env.BENCH_WEBHOOK_SETTINGS) as Record<string, number>) : {};
      for (const [key, value] of Object.entries(tuned)) {
        await sql.query('INSERT INTO settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value', [key, JSON.stringify(value)]);
      }
      await reset(receiver);
      await stats?.reset();
      const ours = await startOurs(db.url, secrets, { profile: opts.profile, label: 'webhooks', env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
      defer(() => ours.child.stop());
      const oursDrain = await drain(receiver, sql, oursIds, ours.child.pid, Math.max(60_000, backlog * 20));
      const oursHeap = await heapOf(ours);
      const oursStatements = await statementsPerDelivery(stats, backlog, 'ours');
      await new Promise((r) => setTimeout(r, 2000));
      let n = backlog;
      const oursLatency = await latencies(receiver, samples, async (i) => {
        const data = paymentData(1_000_000 + i);
        await transaction(db.db, (tx) => recordEvent(tx, { brandId: oursBrands[i % oursBrands.length]!.id, mode: 'live', event: 'payment.completed', data, transactionId: null }));
        const committedAt = now();
        // recordEvent names the event itself; it is the newest one (one producer, one at a time).
        const [{ public_id }] = (await sql.query<{ public_id: string }>('SELECT public_id FROM webhook_events ORDER BY id DESC LIMIT 1')).rows as [{ public_id: string }];
        return { id: public_id, committedAt };
      });
      await ours.child.stop();

      // Baseline: its own backlog on the other brands' endpoints; its worker starts and drains it.
      const baseIds = await seedDeliveries(sql, baselineBrands, backlog, backlog);
      await reset(receiver);
      await stats?.reset();
      const worker = startChild('baseline worker', 'bench/servers/baseline-webhooks.ts', { env: { ...secrets.env, DATABASE_URL: db.url, BENCH_BRAND_IDS: baselineBrands.map((b) => b.id).join(',') } });
      defer(() => worker.stop());
      await worker.message('ready');
      const baseDrain = await drain(receiver, sql, baseIds, worker.pid, Math.max(60_000, backlog * 20));
      const baseStatements = await statementsPerDelivery(stats, backlog, 'baseline');
      await new Promise((r) => setTimeout(r, 2000));
      const baseLatency = await latencies(receiver, samples, async (i) => {
        const id = `evt_${randomUUID().replaceAll('-', '')}`;
        const brand = baselineBrands[i % baselineBrands.length]!;
        const payload = JSON.stringify({ id, event: 'payment.completed', created_at: new Date().toISOString(), data: paymentData(2_000_000 + n++) });
        const client = await sql.connect();
        try {
          await client.query('BEGIN');
          await client.query(
            `WITH ev AS (INSERT INTO webhook_events (public_id, brand_id, event, payload, created_at) VALUES ($1, $2, 'payment.completed', $3, now()) RETURNING id, brand_id)
             INSERT INTO webhook_deliveries (event_id, endpoint_id, brand_id, url, status, next_attempt_at)
             SELECT ev.id, ep.id, ev.brand_id, ep.url, 'pending', now() FROM ev JOIN webhook_endpoints ep ON ep.brand_id = ev.brand_id`,
            [id, brand.id, payload],
          );
          await client.query(`SELECT pg_notify('bench_webhooks', '')`);
          await client.query('COMMIT');
          return { id, committedAt: now() };
        } finally {
          client.release();
        }
      });
      await worker.stop();

      const okDrain = (d: Drain) => d.succeeded === backlog && d.attemptsLogged === backlog && d.badSignatures === 0;
      const oursMedian = quantile(oursLatency, 0.5);
      const rows: Row[] = [
        { metric: 'deliveries/s sustained (10-90 % of backlog)', ours: oursDrain.sustainedPerSecond, baseline: baseDrain.sustainedPerSecond, ratio: ratio(oursDrain.sustainedPerSecond, baseDrain.sustainedPerSecond), target: '>= 1000/s', met: oursDrain.sustainedPerSecond >= 1000 },
        { metric: 'deliveries/s whole backlog', ours: oursDrain.overallPerSecond, baseline: baseDrain.overallPerSecond, ratio: ratio(oursDrain.overallPerSecond, baseDrain.overallPerSecond) },
        { metric: 'delivered, success + attempt logged', ours: `${oursDrain.attemptsLogged}/${backlog}`, baseline: `${baseDrain.attemptsLogged}/${backlog}`, target: 'all', met: okDrain(oursDrain) && okDrain(baseDrain) },
        { metric: 'bad signatures / duplicates at receiver', ours: `${oursDrain.badSignatures}/${oursDrain.duplicates}`, baseline: `${baseDrain.badSignatures}/${baseDrain.duplicates}`, target: '0/0', met: oursDrain.badSignatures + oursDrain.duplicates + baseDrain.badSignatures + baseDrain.duplicates === 0 },
        { metric: 'commit -> receiver median, idle (ms)', ours: oursMedian, baseline: quantile(baseLatency, 0.5), ratio: ratio(oursMedian, quantile(baseLatency, 0.5)), target: '<= 250 ms', met: oursMedian !== null && oursMedian <= 250 },
        { metric: 'commit -> receiver p90, idle (ms)', ours: quantile(oursLatency, 0.9), baseline: quantile(baseLatency, 0.9) },
        { metric: 'worker process RSS max during drain (MB)', ours: oursDrain.rss.maxMb, baseline: baseDrain.rss.maxMb, ratio: ratio(oursDrain.rss.maxMb, baseDrain.rss.maxMb), target: '<= 300 MB', met: oursDrain.rss.maxMb !== null && oursDrain.rss.maxMb <= 300 },
      ];
      return {
        rows,
        settings: { brands: brands.length, backlog, latencySamples: samples, webhookSettings: { ...(await readWebhookSettings(db.db)) } },
        details: { oursDrain, oursHeap, baseDrain, oursStatements, baseStatements, oursLatencyMs: oursLatency.map(round1), baselineLatencyMs: baseLatency.map(round1) },
      };
    }),
};
