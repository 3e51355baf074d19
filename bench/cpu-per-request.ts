import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchDatabase } from './lib/database.ts';
import { startLoadGenerator, writeTargets, type LoadTargets } from './lib/load.ts';
import { listPayments, seedBrands, seedCustomers, seedGateways, seedPayments, withPool } from './lib/seed.ts';
import { benchSecrets } from './lib/secrets.ts';
import { startBaseline, startOurs } from './lib/servers.ts';

/**
 * CPU time per request of our server and of PostgreSQL (its backends), for
 * payment reads, customer reads and keyed intent creation at 64 connections:
 * /proc/<pid>/stat before and after each round, divided by the requests served.
 * Less sensitive to other work on the machine than throughput ratios (a process
 * is charged only for the time it runs), so it compares two commits on a shared
 * machine. Usage: node bench/cpu-per-request.ts (PROBE_SECONDS, default 8;
 * PROBE_PATHS, e.g. "keyed POST /payments", default every path).
 * 20 brands, 10,000 customers and their payments. Each path runs against our
 * server, then against the baseline (bench/servers/baseline.ts with the
 * Idempotency-Key protocol by hand, BASELINE_IDEMPOTENCY=1), so the figures of
 * both sides come from the same database and data.
 */
const seconds = Number(process.env.PROBE_SECONDS ?? 8);
const TICKS_PER_SECOND = 100;

/** CPU time of a process; with `reaped`, also that of its children that have ended (a backend whose connection closed). */
function cpuMs(pid: number, opts: { reaped?: boolean } = {}): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  const children = opts.reaped ? Number(fields[13]) + Number(fields[14]) : 0;
  return ((own + children) / TICKS_PER_SECOND) * 1000;
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null; // the process ended between listing and reading
  }
}

/** The postmaster listening on `port` and its children (the backends). */
function postgresCpuMs(port: string): number {
  const pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  const master = pids.find((p) => {
    const args = readOrNull(`/proc/${p}/cmdline`)?.split('\0') ?? [];
    return args.some((a) => a.endsWith('postgres')) && args.includes(port);
  });
  if (!master) throw new Error(`no PostgreSQL on port ${port}`);
  let total = 0;
  for (const p of pids) {
    const status = readOrNull(`/proc/${p}/status`);
    const parent = status && /PPid:\s+(\d+)/.exec(status)?.[1];
    if (p === master) total += cpuMs(Number(p), { reaped: true });
    else if (parent === master) total += cpuMs(Number(p));
  }
  return total;
}

const db = await startBenchDatabase();
const port = new URL(db.url).port;
const secrets = benchSecrets();
const tmp = mkdtempSync(path.join(os.tmpdir(), 'pc-bench-cpu-'));
const { brands, customers, payments } = await withPool(db.url, async (pool) => {
  const brands = await seedBrands(pool, 20);
  const gateways = await seedGateways(db.db);
  const customers = await seedCustomers(pool, secrets.keys, brands, 10_000);
  await seedPayments(pool, gateways, 'history');
  return { brands, customers, payments: await listPayments(pool, brands) };
});
const tokens = brands.map((b) => b.apiKey);
const createBody = (i: number) => JSON.stringify({ amount: `${100 + (i % 5000)}.${String(i % 100).padStart(2, '0')}`, currency: 'BDT', reference: `order-${i}`, metadata: { cart: String(i), channel: 'web' } });
const allTargets: Record<string, LoadTargets> = {
  'GET /payments/{id}': { method: 'GET', tokens, items: payments.map((p) => [p.brandIndex, `/api/v1/payments/${p.paymentId}`, null]), order: 'random', idempotencyKey: false },
  'GET /customers/{identifier}': {
    method: 'GET',
    tokens,
    items: customers.map((c, i) => [c.brandIndex, `/api/v1/customers/${encodeURIComponent(i % 2 === 0 ? c.email : c.phone)}`, null]),
    order: 'random',
    idempotencyKey: false,
  },
  'keyed POST /payments': { method: 'POST', tokens, items: Array.from({ length: 60_000 }, (_, i) => [i % brands.length, '/api/v1/payments', createBody(i)]), order: 'sequence', idempotencyKey: true },
};
// PROBE_PATHS: a comma-separated subset of the paths' names (default all).
const only = process.env.PROBE_PATHS?.split(',').map((x) => x.trim());
const targets = Object.fromEntries(Object.entries(allTargets).filter(([name]) => !only || only.includes(name)));
const ours = await startOurs(db.url, secrets, {});
const baseline = await startBaseline(db.url, secrets, { BASELINE_IDEMPOTENCY: '1' });
const gen = await startLoadGenerator();
const settle = () => new Promise((r) => setTimeout(r, 1000));
try {
  for (const [name, t] of Object.entries(targets)) {
    const file = writeTargets(tmp, name.replace(/\W+/g, '-'), t);
    for (const server of [ours, baseline]) {
      await gen.run({ url: server.url, connections: 64, durationSeconds: 3, targetsFile: file }, server.child.pid);
      await settle();
      for (let round = 0; round < 2; round++) {
        const [node0, pg0] = [cpuMs(server.child.pid), postgresCpuMs(port)];
        const r = await gen.run({ url: server.url, connections: 64, durationSeconds: seconds, targetsFile: file }, server.child.pid);
        await settle();
        const [node1, pg1] = [cpuMs(server.child.pid), postgresCpuMs(port)];
        const per = (ms: number) => ((ms * 1000) / r.requests).toFixed(0);
        console.log(`${name}, ${server.name.padEnd(8)} round ${round + 1}: ${r.rps.toFixed(0)} req/s, server ${per(node1 - node0)} µs/request, PostgreSQL ${per(pg1 - pg0)} µs/request, load ${os.loadavg()[0]!.toFixed(1)}`);
      }
    }
  }
} finally {
  await gen.stop();
  await ours.child.stop();
  await baseline.child.stop();
  await db.stop();
  rmSync(tmp, { recursive: true, force: true });
}
