import { AsyncLocalStorage } from 'node:async_hooks';
import type { Server } from 'node:http';
import { monitorEventLoopDelay, PerformanceObserver, type EntryType } from 'node:perf_hooks';
import pg from 'pg';

/**
 * Where a request's time goes inside our server, and what else the process did
 * meanwhile (diagnostics for the paced runs; `--trace`, BENCH_TRACE=1 in our
 * server's environment). Installed by bench/servers/ours.ts before anything
 * connects, it records:
 * - every request from the server's 'request' event to the response's 'finish',
 *   with its statements (pg Client.query) and its waits for a pooled connection
 *   (pg Pool.connect), told apart from other work by AsyncLocalStorage;
 * - every statement sent outside a request (pg-boss polling, sweeps, workers),
 *   by kind;
 * - garbage collections (PerformanceObserver 'gc') and event-loop delay
 *   (monitorEventLoopDelay, plus a 2 ms ticker that notes each stall with its time);
 * and, for the slowest 1 % of requests, what overlapped them. Nothing here runs
 * unless the flag is set: the server measured by default is the production one.
 */

interface Span {
  label: string;
  t0: number;
  t1: number;
}
interface RequestRecord {
  t0: number;
  t1: number;
  queries: Span[];
  waits: Span[];
}

const als = new AsyncLocalStorage<RequestRecord>();
let requests: RequestRecord[] = [];
let background: Span[] = [];
let gcs: Array<Span & { kind: number }> = [];
/** A stall: the ticker ran late; `cpu` is how much of it the main thread spent running (the rest it was off the CPU). */
let stalls: Array<Span & { cpu: number }> = [];
const eld = monitorEventLoopDelay({ resolution: 1 });

export function classify(text: string): string {
  const t = text.replace(/\s+/g, ' ');
  if (/pgboss\./i.test(t)) {
    const m = /pgboss\."?(\w+)"?/i.exec(t);
    const verb = /^\s*(WITH|SELECT|INSERT|UPDATE|DELETE)/i.exec(t)?.[1]?.toUpperCase() ?? t.slice(0, 12);
    return `pg-boss ${verb} ${m?.[1] ?? ''}`.trim();
  }
  if (/api_keys/.test(t)) return /^\s*update/i.test(t) ? 'api-key last_used_at' : 'api-key lookup';
  if (/rate_limits/.test(t)) return /^\s*insert|WITH input/i.test(t) ? 'rate-limit count' : `rate-limit ${t.slice(0, 30)}`;
  if (/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(t)) return t.split(' ')[0]!.toUpperCase();
  if (/payment_intents/.test(t) && /^\s*select/i.test(t)) return 'payment view';
  if (/customers/.test(t) && /^\s*select/i.test(t)) return 'customer view';
  return t.slice(0, 60);
}

function patchPg(): void {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; submit?: unknown } | undefined;
    const text = typeof config === 'string' ? config : config?.text;
    if (!text || (typeof config === 'object' && typeof config.submit === 'function')) return query.apply(this, args);
    const t0 = performance.now();
    const ctx = als.getStore();
    const done = () => {
      const span = { label: classify(text), t0, t1: performance.now() };
      if (ctx) ctx.queries.push(span);
      else background.push(span);
    };
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const cb = args[last] as (...a: unknown[]) => unknown;
      args[last] = (...a: unknown[]) => {
        done();
        return cb(...a);
      };
      return query.apply(this, args);
    }
    const out = query.apply(this, args);
    if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then(done, done);
    return out;
  };
  const poolProto = pg.Pool.prototype as unknown as { connect: (...args: unknown[]) => unknown };
  const connect = poolProto.connect;
  poolProto.connect = function (this: unknown, ...args: unknown[]) {
    const ctx = als.getStore();
    const out = connect.apply(this, args);
    if (ctx && out && typeof (out as Promise<unknown>).then === 'function') {
      const t0 = performance.now();
      const done = () => ctx.waits.push({ label: 'pool', t0, t1: performance.now() });
      (out as Promise<unknown>).then(done, done);
    }
    return out;
  };
}

function threadCpuMs(): number {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
}

let installed = false;
let cpuAtReset = 0;
let resetAt = 0;

/** Patches pg and starts the observers; call before the service connects. */
export function installTrace(): void {
  if (installed) return;
  installed = true;
  patchPg();
  eld.enable();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ label: 'gc', t0: e.startTime, t1: e.startTime + e.duration, kind: ((e as PerformanceEntry & { detail?: { kind?: number } }).detail)?.kind ?? 0 });
  }).observe({ entryTypes: ['gc' as EntryType] });
  let last = performance.now();
  let lastCpu = threadCpuMs();
  setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    if (now - last > 7) stalls.push({ label: 'stall', t0: last + 2, t1: now, cpu: cpu - lastCpu });
    last = now;
    lastCpu = cpu;
  }, 2).unref();
}

/** Records each request of `server`; the listener is prepended so the request's own work runs inside its context. */
export function traceRequests(server: Server): void {
  server.prependListener('request', (_req, res) => {
    const rec: RequestRecord = { t0: performance.now(), t1: 0, queries: [], waits: [] };
    als.enterWith(rec);
    res.once('finish', () => {
      rec.t1 = performance.now();
      requests.push(rec);
    });
  });
}

export function resetTrace(): void {
  requests = [];
  background = [];
  gcs = [];
  stalls = [];
  eld.reset();
  cpuAtReset = threadCpuMs();
  resetAt = performance.now();
}

const r2 = (n: number) => Math.round(n * 100) / 100;
function pct(sorted: number[], p: number): number {
  return sorted.length ? r2(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!) : 0;
}
/** Length of the union of spans (a request's statements do not overlap, but be safe). */
function covered(spans: Span[]): number {
  const s = [...spans].sort((a, b) => a.t0 - b.t0);
  let total = 0;
  let end = -Infinity;
  for (const x of s) {
    if (x.t1 <= end) continue;
    total += x.t1 - Math.max(x.t0, end);
    end = x.t1;
  }
  return total;
}
const overlaps = (a: Span, b: { t0: number; t1: number }) => a.t0 < b.t1 && a.t1 > b.t0;

export interface TraceSummary {
  requests: number;
  serverMs: { p50: number; p90: number; p99: number; max: number };
  /** Mean of each part over all requests and over the slowest 1 %. */
  parts: Record<'all' | 'slowest', { totalMs: number; statementsMs: number; poolWaitMs: number; otherMs: number; statements: number }>;
  /** Per kind of statement sent by requests: count per request, p50 and p99 of its round trip. */
  statements: Record<string, { perRequest: number; p50: number; p99: number; max: number }>;
  /** Statements sent outside any request (background work), by kind: count, total and max ms. */
  background: Record<string, { count: number; totalMs: number; maxMs: number }>;
  gc: { count: number; totalMs: number; maxMs: number; byKind: Record<string, { count: number; totalMs: number; maxMs: number }> };
  eventLoopDelayMs: { p50: number; p99: number; max: number; stallsOver7ms: number; stallMsTotal: number };
  /** Stalls by what the main thread did during them: ran (with or without a collection in it) or was off the CPU. */
  stallCauses: { gcMs: number; runningNoGcMs: number; offCpuMs: number };
  /** Main-thread CPU per request (µs), background work included. */
  mainThreadCpuUsPerRequest: number;
  /**
   * Moments (100 ms, ms after the reset) holding three or more of the slowest 1 %, with the background
   * statements sent from 200 ms before to the moment's end (kind: count), collections and stalls in it.
   */
  slowMoments: Array<{ at: number; slow: number; background: Record<string, number>; gcMs: number; stallMs: number }>;
  /** Of the slowest 1 % of requests: how many overlapped each kind of event. */
  slowestOverlapping: { withBackgroundStatement: number; withGc: number; withStall: number; withNothing: number; ofSlowest: number };
}

const GC_KINDS: Record<number, string> = { 1: 'scavenge', 2: 'mark-compact', 4: 'incremental', 8: 'weak-callbacks', 16: 'minor-mark-sweep' };

export function summariseTrace(): TraceSummary {
  const done = requests.filter((r) => r.t1 > 0);
  const totals = done.map((r) => r.t1 - r.t0).sort((a, b) => a - b);
  const partsOf = (rs: RequestRecord[]) => {
    const n = Math.max(1, rs.length);
    let total = 0;
    let st = 0;
    let pw = 0;
    let count = 0;
    for (const r of rs) {
      const t = r.t1 - r.t0;
      const s = covered(r.queries);
      const w = covered(r.waits);
      total += t;
      st += s;
      pw += w;
      count += r.queries.length;
    }
    return { totalMs: r2(total / n), statementsMs: r2(st / n), poolWaitMs: r2(pw / n), otherMs: r2((total - st - pw) / n), statements: r2(count / n) };
  };
  const threshold = pct(totals, 0.99);
  const slowest = done.filter((r) => r.t1 - r.t0 >= threshold);
  const byLabel = new Map<string, number[]>();
  for (const r of done) for (const q of r.queries) (byLabel.get(q.label) ?? byLabel.set(q.label, []).get(q.label)!).push(q.t1 - q.t0);
  const statements: TraceSummary['statements'] = {};
  for (const [label, ds] of [...byLabel].sort((a, b) => b[1].length - a[1].length)) {
    ds.sort((a, b) => a - b);
    statements[label] = { perRequest: r2(ds.length / Math.max(1, done.length)), p50: pct(ds, 0.5), p99: pct(ds, 0.99), max: pct(ds, 1) };
  }
  const bg: TraceSummary['background'] = {};
  for (const b of background) {
    const e = (bg[b.label] ??= { count: 0, totalMs: 0, maxMs: 0 });
    e.count++;
    e.totalMs = r2(e.totalMs + (b.t1 - b.t0));
    e.maxMs = r2(Math.max(e.maxMs, b.t1 - b.t0));
  }
  const byKind: TraceSummary['gc']['byKind'] = {};
  for (const g of gcs) {
    const e = (byKind[GC_KINDS[g.kind] ?? String(g.kind)] ??= { count: 0, totalMs: 0, maxMs: 0 });
    e.count++;
    e.totalMs = r2(e.totalMs + (g.t1 - g.t0));
    e.maxMs = r2(Math.max(e.maxMs, g.t1 - g.t0));
  }
  const ns = (v: number) => r2(v / 1e6);
  const overlapping = (spans: Span[]) => slowest.filter((r) => spans.some((s) => overlaps(s, r))).length;
  const withBg = overlapping(background);
  const withGc = overlapping(gcs);
  const withStall = overlapping(stalls);
  return {
    requests: done.length,
    serverMs: { p50: pct(totals, 0.5), p90: pct(totals, 0.9), p99: threshold, max: pct(totals, 1) },
    parts: { all: partsOf(done), slowest: partsOf(slowest) },
    statements,
    background: bg,
    gc: { count: gcs.length, totalMs: r2(gcs.reduce((a, g) => a + g.t1 - g.t0, 0)), maxMs: r2(Math.max(0, ...gcs.map((g) => g.t1 - g.t0))), byKind },
    eventLoopDelayMs: { p50: ns(eld.percentile(50)), p99: ns(eld.percentile(99)), max: ns(eld.max), stallsOver7ms: stalls.length, stallMsTotal: r2(stalls.reduce((a, s) => a + s.t1 - s.t0, 0)) },
    stallCauses: stallCauses(),
    slowMoments: slowMoments(slowest),
    mainThreadCpuUsPerRequest: Math.round(((threadCpuMs() - cpuAtReset) * 1000) / Math.max(1, done.length)),
    slowestOverlapping: {
      withBackgroundStatement: withBg,
      withGc,
      withStall,
      withNothing: slowest.filter((r) => ![...background, ...gcs, ...stalls].some((s) => overlaps(s, r))).length,
      ofSlowest: slowest.length,
    },
  };
}

function stallCauses(): TraceSummary['stallCauses'] {
  let gcMs = 0;
  let runningNoGcMs = 0;
  let offCpuMs = 0;
  for (const s of stalls) {
    const len = s.t1 - s.t0;
    const inGc = gcs.filter((g) => overlaps(g, s)).reduce((a, g) => a + Math.min(g.t1, s.t1) - Math.max(g.t0, s.t0), 0);
    const running = Math.min(len, s.cpu);
    const gc = Math.min(inGc, running);
    gcMs += gc;
    runningNoGcMs += running - gc;
    offCpuMs += len - running;
  }
  return { gcMs: r2(gcMs), runningNoGcMs: r2(runningNoGcMs), offCpuMs: r2(offCpuMs) };
}

function slowMoments(slowest: RequestRecord[]): TraceSummary['slowMoments'] {
  const buckets = new Map<number, number>();
  for (const r of slowest) {
    const k = Math.floor((r.t0 - resetAt) / 100);
    buckets.set(k, (buckets.get(k) ?? 0) + 1);
  }
  return [...buckets]
    .filter(([, n]) => n >= 3)
    .sort((a, b) => a[0] - b[0])
    .map(([k, n]) => {
      const from = resetAt + k * 100;
      const to = from + 100;
      const bg: Record<string, number> = {};
      for (const b of background) if (b.t0 >= from - 200 && b.t0 < to) bg[b.label] = (bg[b.label] ?? 0) + 1;
      const within = (spans: Span[]) => r2(spans.filter((x) => overlaps(x, { t0: from - 200, t1: to })).reduce((a, x) => a + x.t1 - x.t0, 0));
      return { at: k * 100, slow: n, background: bg, gcMs: within(gcs), stallMs: within(stalls) };
    });
}
