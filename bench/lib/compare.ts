import os from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import type { LoadGenerator, MeasuredLoad } from './load.ts';
import { jobsDuring, waitForQuietDatabase, type BackgroundJob, type statementStats } from './database.ts';
import type { TraceSummary } from './trace.ts';
import { postgresCpuMs, processCpuMs, round1, round2 } from './processes.ts';
import type { Row } from './report.ts';
import { ratio } from './report.ts';
import type { BenchOptions, RunningServer } from './servers.ts';

export interface SideFigures {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** Responses with another status than the expected one, plus socket errors and timeouts. */
  failures: number;
  rssMaxMb: number | null;
  /** A list of one-time writes ran out during the runs (later requests repeated earlier ones). */
  wrapped: boolean;
  rounds: MeasuredLoad[];
}

function summarise(rounds: MeasuredLoad[], expectStatus: number): SideFigures {
  const mean = (f: (r: MeasuredLoad) => number) => rounds.reduce((a, r) => a + f(r), 0) / rounds.length;
  const failures = rounds.reduce((a, r) => a + r.errors + r.timeouts + Object.entries(r.statuses).reduce((n, [s, c]) => (Number(s) === expectStatus ? n : n + c), 0), 0);
  const rss = rounds.map((r) => r.rss.maxMb).filter((v): v is number => v !== null);
  return {
    rps: round1(mean((r) => r.rps)),
    p50: round2(mean((r) => r.latency.p50)),
    p99: round2(mean((r) => r.latency.p99)),
    requests: rounds.reduce((a, r) => a + r.requests, 0),
    failures,
    rssMaxMb: rss.length ? Math.max(...rss) : null,
    wrapped: rounds.some((r) => r.wrapped),
    rounds,
  };
}

/**
 * Loads ours and the baseline with the same targets, one at a time: a warm-up
 * of each (JIT, pools, caches), then rounds in alternating order (ours first,
 * then baseline first) so a slow patch of a shared machine hits both. Figures
 * are the means over the rounds.
 */
export async function compareUnderLoad(
  gen: LoadGenerator,
  servers: { ours: RunningServer; baseline: RunningServer },
  targetsFile: (side: 'ours' | 'baseline') => string,
  opts: BenchOptions & { expectStatus: number; rounds?: number; rate?: number; stats?: ReturnType<typeof statementStats>; databaseUrl: string },
): Promise<{ ours: SideFigures; baseline: SideFigures }> {
  const plan = (s: RunningServer, seconds: number) => ({ url: s.url, connections: opts.connections, durationSeconds: seconds, targetsFile: targetsFile(s.name), ...(opts.rate ? { rate: opts.rate } : {}) });
  // Requests cut off at the end of a run are still being worked on by the server, and their statements
  // by PostgreSQL: the next run starts once the database is quiet, so one side's backlog is never
  // measured as the other side's slowness. A fixed second was not enough: with 100k rows the
  // baseline's ten-SMS requests ran on for seconds into our rounds (pg_stat_statements of our rounds
  // held the baseline's candidate query, 24 s of PostgreSQL time).
  const settle = async (after: string) => {
    await new Promise((r) => setTimeout(r, 1000));
    const waited = await waitForQuietDatabase(opts.databaseUrl);
    if (waited > 1500) console.log(`  (after ${after}: ${waited} ms until the database was quiet)`);
  };
  for (const s of [servers.ours, servers.baseline]) {
    if (opts.warmupSeconds > 0) {
      await gen.run(plan(s, opts.warmupSeconds), s.child.pid);
      await settle(`${s.name}'s warm-up`);
    }
  }
  const rounds = opts.rounds ?? (opts.quick ? 1 : 2);
  const measured: Record<'ours' | 'baseline', MeasuredLoad[]> = { ours: [], baseline: [] };
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? [servers.ours, servers.baseline] : [servers.baseline, servers.ours];
    for (const s of order) {
      await opts.stats?.reset();
      const tracing = s.name === 'ours' && process.env.BENCH_TRACE === '1';
      // BENCH_CPU=1 (or BENCH_TRACE=1): CPU per request of both servers, from /proc, without tracing inside ours.
      const cpuAccounting = process.env.BENCH_TRACE === '1' || process.env.BENCH_CPU === '1';
      if (tracing) {
        s.child.send({ type: 'trace-reset' });
        await s.child.message('trace-reset', 10_000);
      }
      const other = s.name === 'ours' ? servers.baseline : servers.ours;
      const cpu0 = cpuAccounting ? processCpuMs(s.child.pid) : 0;
      const otherCpu0 = cpuAccounting ? processCpuMs(other.child.pid) : 0;
      const pgPort = cpuAccounting && opts.databaseUrl ? new URL(opts.databaseUrl).port : null;
      const pg0 = pgPort ? postgresCpuMs(pgPort) : 0;
      const load: MeasuredLoad & { statementsPerRequest?: Array<{ query: string; perRequest: number; totalMs: number }> } = await gen.run(plan(s, opts.durationSeconds), s.child.pid);
      if (opts.stats && load.requests > 0) {
        const all = await opts.stats.read();
        load.statementsPerRequest = all.slice(0, 25).map((q) => ({ query: q.query, perRequest: round2(q.calls / load.requests), totalMs: q.totalMs }));
        const total = load.statementsPerRequest.reduce((a, q) => a + q.perRequest, 0);
        console.log(`  ${s.name}: ${round2(total)} statements per request, ${all.reduce((a, q) => a + q.totalMs, 0)} ms executing in PostgreSQL`);
        for (const q of load.statementsPerRequest.filter((x) => x.perRequest >= 0.05)) console.log(`    ${q.perRequest.toFixed(2).padStart(6)} ${String(q.totalMs).padStart(7)} ms  ${q.query}`);
      }
      if (cpuAccounting) {
        const us = Math.round(((processCpuMs(s.child.pid) - cpu0) * 1000) / Math.max(1, load.requests));
        (load as MeasuredLoad & { cpuUsPerRequest?: number }).cpuUsPerRequest = us;
        const idle = Math.round((processCpuMs(other.child.pid) - otherCpu0) / load.durationSeconds);
        const pgUs = pgPort ? Math.round(((postgresCpuMs(pgPort) - pg0) * 1000) / Math.max(1, load.requests)) : null;
        console.log(`  ${s.name}: ${us} µs CPU per request (process, all threads), PostgreSQL ${pgUs ?? '?'} µs; ${other.name}, idle meanwhile: ${idle} ms CPU per second; client p50/p90/p99/max ${load.latency.p50}/${load.latency.p90}/${load.latency.p99}/${load.latency.max} ms; load ${os.loadavg()[0]!.toFixed(2)}`);
      }
      if (tracing) {
        s.child.send({ type: 'trace' });
        const { summary } = await s.child.message<{ summary: TraceSummary }>('trace', 30_000);
        (load as MeasuredLoad & { trace?: TraceSummary }).trace = summary;
        printTrace(load, summary);
      }
      if (s.name === 'ours') (load as MeasuredLoad & { memory?: unknown }).memory = await heapOf(s);
      if (load.startedAt !== undefined && load.slowest) {
        const jobs = s.name === 'ours' ? await jobsDuring(opts.databaseUrl, load.startedAt, load.startedAt + load.durationSeconds * 1000) : [];
        (load as MeasuredLoad & { jobs?: BackgroundJob[] }).jobs = jobs;
        printSlowest(s.name, load, jobs);
      }
      measured[s.name].push(load);
      await settle(`${s.name}'s round`);
    }
  }
  return { ours: summarise(measured.ours, opts.expectStatus), baseline: summarise(measured.baseline, opts.expectStatus) };
}

/** The standard rows of an HTTP benchmark: throughput with its ratio, latencies, failures and memory. */
export function httpRows(label: string, f: { ours: SideFigures; baseline: SideFigures }, targets: { minRatio?: number; minRps?: number; maxP99Ms?: number; maxRssMb?: number }): Row[] {
  const r = ratio(f.ours.rps, f.baseline.rps);
  // Latencies of a run in which nothing completed say nothing.
  const answered = f.ours.requests > 0;
  const rows: Row[] = [
    {
      metric: `${label} throughput (req/s)`,
      ours: f.ours.rps,
      baseline: f.baseline.rps,
      ratio: r,
      ...(targets.minRatio !== undefined ? { target: `ratio >= ${targets.minRatio}`, met: r !== null && r >= targets.minRatio } : {}),
      ...(targets.minRps !== undefined ? { target: `>= ${targets.minRps}/s`, met: f.ours.rps >= targets.minRps } : {}),
    },
    { metric: `${label} p50 (ms)`, ours: f.ours.p50, baseline: f.baseline.p50, ratio: ratio(f.ours.p50, f.baseline.p50) },
    {
      metric: `${label} p99 (ms)`,
      ours: f.ours.p99,
      baseline: f.baseline.p99,
      ratio: ratio(f.ours.p99, f.baseline.p99),
      ...(targets.maxP99Ms !== undefined ? { target: `<= ${targets.maxP99Ms} ms`, met: answered && f.ours.p99 <= targets.maxP99Ms } : {}),
    },
    { metric: `${label} failed requests`, ours: f.ours.failures, baseline: f.baseline.failures, target: '0', met: f.ours.failures === 0 && f.baseline.failures === 0 },
    {
      metric: `${label} server RSS max (MB)`,
      ours: f.ours.rssMaxMb,
      baseline: f.baseline.rssMaxMb,
      ratio: ratio(f.ours.rssMaxMb, f.baseline.rssMaxMb),
      ...(targets.maxRssMb !== undefined ? { target: `<= ${targets.maxRssMb} MB`, met: f.ours.rssMaxMb !== null && f.ours.rssMaxMb <= targets.maxRssMb } : {}),
    },
  ];
  return rows;
}

/**
 * Before timing anything: both servers must give the same answer for the same
 * request (status and JSON body), or the comparison would be between two
 * different pieces of work.
 */
export async function assertSameAnswers(servers: { ours: RunningServer; baseline: RunningServer }, samples: Array<{ path: string; token: string }>): Promise<void> {
  for (const s of samples) {
    const get = async (base: string) => {
      const res = await fetch(base + s.path, { headers: { authorization: `Bearer ${s.token}` } });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    const [a, b] = [await get(servers.ours.url), await get(servers.baseline.url)];
    if (a.status !== 200 || !isDeepStrictEqual(a, b)) {
      throw new Error(`ours and the baseline answer ${s.path} differently:\nours     ${JSON.stringify(a)}\nbaseline ${JSON.stringify(b)}`);
    }
  }
}

/**
 * Our server's heap by V8 space right after a run (bench/servers/ours.ts answers over IPC): where its resident
 * set goes. BENCH_HEAP_AFTER_GC=1 (with --expose-gc in BENCH_OURS_ENV's NODE_OPTIONS) collects first.
 */
export async function heapOf(server: RunningServer): Promise<Record<string, unknown> | null> {
  if (server.name !== 'ours') return null;
  server.child.send({ type: 'memory', collect: process.env.BENCH_HEAP_AFTER_GC === '1' });
  return server.child.message<Record<string, unknown>>('memory', 10_000).catch(() => null);
}

/** One run's trace (BENCH_TRACE=1): the client's latencies next to the server's own, and what else happened. */
function printTrace(load: MeasuredLoad, t: TraceSummary): void {
  const j = (o: unknown) => JSON.stringify(o);
  console.log(`  trace: client p50/p90/p99/max ${load.latency.p50}/${load.latency.p90}/${load.latency.p99}/${load.latency.max} ms; server ${t.serverMs.p50}/${t.serverMs.p90}/${t.serverMs.p99}/${t.serverMs.max} ms over ${t.requests} requests; load ${os.loadavg()[0]!.toFixed(2)}`);
  console.log(`    parts (mean): all ${j(t.parts.all)}`);
  console.log(`                  slowest 1 % ${j(t.parts.slowest)}`);
  for (const [k, v] of Object.entries(t.statements)) console.log(`    stmt ${k.padEnd(26)} ${j(v)}`);
  console.log(`    background: ${j(t.background)}`);
  console.log(`    gc: ${j(t.gc)}`);
  console.log(`    stalls by cause (ms): ${j(t.stallCauses)}; main thread ${t.mainThreadCpuUsPerRequest} µs CPU per request`);
  console.log(`    event loop: ${j(t.eventLoopDelayMs)}; slowest 1 % overlapping: ${j(t.slowestOverlapping)}`);
  for (const m of t.slowMoments) console.log(`    slow at ${(m.at / 1000).toFixed(1)} s: ${m.slow} requests; gc ${m.gcMs} ms, stalls ${m.stallMs} ms; background ${j(m.background)}`);
}

/**
 * Paced runs: when in the round the slowest 1 % of requests were sent (100 ms buckets, seconds from the
 * round's start) and which of our background jobs started in it, so a tail can be matched to what caused it.
 */
function printSlowest(side: string, load: MeasuredLoad, jobs: BackgroundJob[]): void {
  const buckets = new Map<number, { n: number; max: number }>();
  for (const [at, ms] of load.slowest ?? []) {
    const b = buckets.get(Math.floor(at / 100)) ?? { n: 0, max: 0 };
    buckets.set(Math.floor(at / 100), { n: b.n + 1, max: Math.max(b.max, ms) });
  }
  const clusters = [...buckets].sort((a, b) => b[1].n - a[1].n).slice(0, 6).sort((a, b) => a[0] - b[0]);
  console.log(`  ${side}, round from ${new Date(load.startedAt ?? 0).toISOString().slice(11, 19)}: slowest 1 % at (s: count, max ms) ${clusters.map(([k, v]) => `${(k / 10).toFixed(1)}: ${v.n}, ${v.max}`).join('; ')}`);
  if (jobs.length) console.log(`    jobs started: ${jobs.map((j) => `${j.name} ${(j.at / 1000).toFixed(1)} s (${j.ms ?? '?'} ms)`).join('; ')}`);
}
