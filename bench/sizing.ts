import { readFileSync } from 'node:fs';
import os from 'node:os';
import { drainDatabase } from './lib/database.ts';
import { withScope, worldSize, type Benchmark } from './lib/benchmark.ts';
import { startLoadGenerator, writeTargets, type LoadGenerator, type LoadTargets, type MeasuredLoad } from './lib/load.ts';
import { postgresCpuMs, processCpuMs, round1, round2 } from './lib/processes.ts';
import type { Row } from './lib/report.ts';
import { listPayments, seedBrands, seedCustomers, seedDevices, seedGateways, seedPayments, withPool } from './lib/seed.ts';
import { startOurs, type RunningServer } from './lib/servers.ts';
import { smsFor } from './sms.ts';

/**
 * Sizing: the same three loads against 1, 2 and 4 `SERVICE_ROLE=api`
 * processes on one PostgreSQL, with one `SERVICE_ROLE=worker` process beside
 * them (as README "Running API and worker processes separately" deploys it):
 * - reads: `GET /api/v1/payments/{id}` of a random seeded payment;
 * - payment creation: `POST /api/v1/payments` with a fresh Idempotency-Key;
 * - SMS intake: `POST /api/mobile/v1/sms/messages`, one bKash SMS per request,
 *   each naming one open transaction (it matches and completes the payment).
 * Each as fast as `--connections` (64) go, spread evenly over the API processes
 * (autocannon's URL list, as a balancer spreading connections). Besides
 * throughput and latency, the CPU each part used per second of the run
 * (the API processes together, the worker, PostgreSQL), from /proc: on a
 * machine with few cores that says which part ran out of room, and so what
 * more processes can and cannot buy. BENCH_SIZING_PROCESSES=1,2 picks others.
 */
const PROCESS_COUNTS = (process.env.BENCH_SIZING_PROCESSES ?? '1,2,4').split(',').map(Number).filter((n) => n > 0);
/** Each API process's pool: the default (README, Configuration). */
const POOL_MAX = 10;

interface Figures {
  processes: number;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** CPU seconds per second of the run (1.0 = one core busy): ours, PostgreSQL, the load generator, and the whole machine (everything, other users included). */
  cpu: { api: number; worker: number; postgres: number; generator: number; machine: number };
  load: MeasuredLoad;
}

export const sizing: Benchmark = {
  name: 'sizing',
  description: 'reads, payment creation and SMS intake against 1, 2 and 4 SERVICE_ROLE=api processes (plus one worker) on one PostgreSQL',
  run: (opts) =>
    withScope('sizing', opts, async ({ db, secrets, tmp, defer }) => {
      const size = worldSize(opts);
      const { brands, payments, devices } = await withPool(db.url, async (pool) => {
        const brands = await seedBrands(pool, size.brands);
        const gateways = await seedGateways(db.db);
        await seedCustomers(pool, secrets.keys, brands, size.rows);
        // Open payments, each with a transaction awaiting its SMS: the reads read them, the SMS complete them.
        await seedPayments(pool, gateways, 'open');
        const devices = await seedDevices(pool, secrets.jwt, brands, 1);
        return { brands, payments: await listPayments(pool, brands, secrets.keys), devices };
      });
      const tokens = brands.map((b) => b.apiKey);
      const reads = writeTargets(tmp, 'reads', {
        method: 'GET',
        tokens,
        items: payments.map((p) => [p.brandIndex, `/api/v1/payments/${p.paymentId}`, null]),
        order: 'random',
        idempotencyKey: false,
      });
      const creations = writeTargets(tmp, 'create', {
        method: 'POST',
        tokens,
        items: Array.from({ length: 200_000 }, (_, i) => [
          i % brands.length,
          '/api/v1/payments',
          JSON.stringify({ amount: `${100 + (i % 5000)}.${String(i % 100).padStart(2, '0')}`, currency: 'BDT', reference: `sizing-${i}`, metadata: { cart: String(i) } }),
        ]),
        order: 'sequence',
        idempotencyKey: true,
      });
      // One SMS per open payment, brands taken in turn; the generator goes on where the previous run stopped,
      // so every run sends SMS no earlier run sent (runs that outlast them repeat, which `wrapped` reports).
      const perBrand = brands.map(() => [] as typeof payments);
      for (const p of payments) perBrand[p.brandIndex]!.push(p);
      const smsItems: LoadTargets['items'] = [];
      for (let k = 0; perBrand.some((l) => k < l.length); k++) {
        for (const [bi, list] of perBrand.entries()) {
          const p = list[k];
          if (!p) continue;
          const message = { device_message_id: `sizing-${p.transactionId}`, sender: 'bKash', body: smsFor(p, 0).body, received_at: new Date().toISOString() };
          smsItems.push([bi, '/api/mobile/v1/sms/messages', JSON.stringify({ messages: [message] })]);
        }
      }
      const smsFile = writeTargets(tmp, 'sms', { method: 'POST', tokens: devices.map((d) => d[0]!.accessToken), items: smsItems, order: 'sequence', idempotencyKey: false });

      const worker = await startOurs(db.url, secrets, { env: { SERVICE_ROLE: 'worker', DATABASE_POOL_MAX: String(POOL_MAX) }, label: 'sizing-worker' });
      defer(() => worker.child.stop());
      const gen = await startLoadGenerator();
      defer(() => gen.stop());

      const scenarios = [
        { name: 'reads', label: 'GET /payments/{id}', file: reads, expect: 200 },
        { name: 'create', label: 'POST /payments', file: creations, expect: 201 },
        { name: 'sms', label: 'POST /sms/messages (1 SMS)', file: smsFile, expect: 200 },
      ];
      const results: Record<string, Figures[]> = Object.fromEntries(scenarios.map((s) => [s.name, []]));
      const pgPort = new URL(db.url).port;
      for (const n of PROCESS_COUNTS) {
        const apis = await Promise.all(
          Array.from({ length: n }, (_, i) => startOurs(db.url, secrets, { env: { SERVICE_ROLE: 'api', DATABASE_POOL_MAX: String(POOL_MAX) }, label: `sizing-api-${i}` })),
        );
        try {
          // Each new process answers before it is timed: a cold start (pools connecting, code compiling) is not its throughput.
          for (const api of apis) await primed(api, tokens[0]!, payments.find((p) => p.brandIndex === 0)!.paymentId);
          for (const s of scenarios) {
            await drainDatabase(db.url);
            if (opts.warmupSeconds > 0) await runOnce(gen, apis, worker, s.file, opts.connections, opts.warmupSeconds, pgPort, s.expect);
            await drainDatabase(db.url);
            const f = await runOnce(gen, apis, worker, s.file, opts.connections, opts.durationSeconds, pgPort, s.expect);
            results[s.name]!.push(f);
            console.log(`  ${n} api: ${s.label}: ${f.rps}/s, p50 ${f.p50} ms, p99 ${f.p99} ms, failures ${f.failures}; CPU api ${f.cpu.api}, worker ${f.cpu.worker}, postgres ${f.cpu.postgres}, generator ${f.cpu.generator}, machine ${f.cpu.machine} of ${os.availableParallelism()}; load ${os.loadavg()[0]!.toFixed(2)}`);
          }
        } finally {
          await Promise.all(apis.map((a) => a.child.stop()));
        }
      }

      const matched = await withPool(db.url, async (pool) => (await pool.query<{ status: string; n: number }>('SELECT match_status AS status, count(*)::int AS n FROM sms_records GROUP BY 1 ORDER BY 1')).rows);
      const rows: Row[] = [];
      for (const s of scenarios) {
        const list = results[s.name]!;
        const first = list[0];
        for (const f of list) {
          const base = `${s.label}, ${f.processes} api`;
          rows.push({ metric: `${base}: throughput (req/s)`, ours: f.rps, ratio: first && first.rps ? round2(f.rps / first.rps) : null });
          rows.push({ metric: `${base}: p50 / p99 (ms)`, ours: `${f.p50} / ${f.p99}` });
          rows.push({ metric: `${base}: CPU api / worker / postgres / generator / machine (cores)`, ours: `${f.cpu.api} / ${f.cpu.worker} / ${f.cpu.postgres} / ${f.cpu.generator} / ${f.cpu.machine}` });
          rows.push({ metric: `${base}: failed requests`, ours: f.failures, target: '0', met: f.failures === 0 });
        }
      }
      rows.push({ metric: 'SMS stored by match status', ours: matched.map((m) => `${m.status} ${m.n}`).join(', ') });
      return {
        rows,
        settings: { brands: size.brands, openPayments: payments.length, processCounts: PROCESS_COUNTS, poolMaxPerProcess: POOL_MAX, workers: 1 },
        details: results,
      };
    }),
};

async function primed(api: RunningServer, token: string, paymentId: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${api.url}/api/v1/payments/${paymentId}`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${api.child.name}: GET /api/v1/payments/{id} answered ${res.status}`);
  }
}

/** CPU time every core of the machine spent busy (not idle, not waiting on I/O), from /proc/stat: whoever used it. */
function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq] = fields;
  const ticks = user! + nice! + system! + irq! + softirq!;
  return (ticks / 100) * 1000;
}

async function runOnce(gen: LoadGenerator, apis: RunningServer[], worker: RunningServer, file: string, connections: number, seconds: number, pgPort: string, expect: number): Promise<Figures> {
  const cpu = () => ({
    api: apis.reduce((a, s) => a + processCpuMs(s.child.pid), 0),
    worker: processCpuMs(worker.child.pid),
    postgres: postgresCpuMs(pgPort),
    generator: processCpuMs(gen.pid),
    machine: machineBusyMs(),
  });
  const before = cpu();
  const started = performance.now();
  const load = await gen.run({ url: apis[0]!.url, urls: apis.map((a) => a.url), connections, durationSeconds: seconds, targetsFile: file }, apis[0]!.child.pid);
  const wall = (performance.now() - started) / 1000;
  const after = cpu();
  const per = (k: keyof typeof before) => round2((after[k] - before[k]) / 1000 / wall);
  const ok = load.statuses[String(expect)] ?? 0;
  return {
    processes: apis.length,
    rps: round1(ok / load.durationSeconds),
    p50: load.latency.p50,
    p99: load.latency.p99,
    failures: load.requests - ok + load.errors + load.timeouts,
    cpu: { api: per('api'), worker: per('worker'), postgres: per('postgres'), generator: per('generator'), machine: per('machine') },
    load,
  };
}
