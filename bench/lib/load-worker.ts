import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import type { LoadPlan, LoadTargets } from './load.ts';

/**
 * The load generator, in a process of its own (so it never shares an event
 * loop with a server). Receives a plan over IPC, runs autocannon (closed loop:
 * each connection sends its next request when the answer arrives) or, for a
 * plan with a rate, a steady open loop of its own, and sends back its summary. Each request is set up from the targets file: a path, the
 * credential of the brand (or device) it belongs to, and an optional body.
 */
process.on('message', (msg: { type: string; plan: LoadPlan }) => {
  if (msg.type !== 'run') return;
  run(msg.plan).then(
    (result) => process.send?.({ type: 'result', result }),
    (err: unknown) => process.send?.({ type: 'failed', message: err instanceof Error ? err.stack ?? err.message : String(err) }),
  );
});
process.send?.({ type: 'ready' });

// `sequence` targets continue where the previous run on the same file stopped
// (warm-up, then rounds), so a write is never sent twice while items last.
const cursors = new Map<string, number>();

async function run(plan: LoadPlan) {
  const targets = JSON.parse(readFileSync(plan.targetsFile, 'utf8')) as LoadTargets;
  let cursor = cursors.get(plan.targetsFile) ?? 0;
  const next = () => {
    const i = targets.order === 'random' ? Math.floor(Math.random() * targets.items.length) : cursor++ % targets.items.length;
    return targets.items[i]!;
  };
  const headersFor = (tokenIndex: number, body: string | null) => {
    const headers: Record<string, string> = { authorization: `Bearer ${targets.tokens[tokenIndex]}` };
    if (body !== null) headers['content-type'] = 'application/json';
    if (targets.idempotencyKey) headers['idempotency-key'] = randomUUID();
    return headers;
  };
  if (plan.rate) {
    const result = await runSteady(plan, targets.method, next, headersFor);
    cursors.set(plan.targetsFile, cursor);
    return { ...result, wrapped: targets.order === 'sequence' && cursor > targets.items.length };
  }
  const statuses: Record<string, number> = {};
  const instance = autocannon({
    // A list: each connection is bound to one of them in turn, as a balancer spreading connections would.
    url: plan.urls ?? plan.url,
    connections: plan.connections,
    duration: plan.durationSeconds,
    // A request that takes longer than this counts as an error, not a slow sample.
    timeout: 30,
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => {
          const [tokenIndex, path, body] = next();
          return { ...req, method: targets.method, path, headers: headersFor(tokenIndex, body), body: body ?? undefined };
        },
        onResponse: (status: number) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
        },
      },
    ],
  });
  const r = await instance;
  cursors.set(plan.targetsFile, cursor);
  return {
    wrapped: targets.order === 'sequence' && cursor > targets.items.length,
    requests: r.requests.total,
    rps: r.requests.average,
    latency: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, mean: r.latency.average },
    errors: r.errors,
    timeouts: r.timeouts,
    statuses,
    durationSeconds: r.duration,
  };
}

/**
 * Open loop at a steady rate: request i is sent at start + i/rate whatever the
 * answers before it did, and its latency counts from that moment, so a server
 * that falls behind is charged the wait (no coordinated omission). Not
 * autocannon's rate option: that sends each connection's whole per-second
 * quota back to back at the top of every second, which measures bursts.
 */
async function runSteady(
  plan: LoadPlan,
  method: 'GET' | 'POST',
  next: () => [number, string, string | null],
  headersFor: (tokenIndex: number, body: string | null) => Record<string, string>,
) {
  const pool = new Pool(new URL(plan.url).origin, { connections: plan.connections, pipelining: 1 });
  /** Each answered request's send time (ms from the start) and latency: when in the round the slow ones were. */
  const timeline: Array<[number, number]> = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  const interval = 1000 / plan.rate!;
  const startedAt = Date.now();
  const start = performance.now();
  const end = start + plan.durationSeconds * 1000;
  const inflight = new Set<Promise<void>>();
  for (let i = 0; ; i++) {
    const due = start + i * interval;
    if (due >= end) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const [tokenIndex, path, body] = next();
    const sent: Promise<void> = pool
      .request({ method, path, headers: headersFor(tokenIndex, body), body: body ?? undefined, headersTimeout: 30_000, bodyTimeout: 30_000 })
      .then(
        async (res) => {
          await res.body.dump();
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          timeline.push([due - start, performance.now() - due]);
        },
        () => {
          errors++;
        },
      )
      .finally(() => inflight.delete(sent));
    inflight.add(sent);
  }
  await Promise.all(inflight);
  await pool.close();
  const sorted = timeline.map(([, ms]) => ms).sort((a, b) => a - b);
  const q = (p: number) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]! * 100) / 100 : 0);
  const seconds = (performance.now() - start) / 1000;
  const slowCut = q(0.99);
  return {
    startedAt,
    slowest: timeline.filter(([, ms]) => ms >= slowCut).map(([at, ms]) => [Math.round(at), Math.round(ms * 10) / 10] as [number, number]),
    requests: sorted.length,
    rps: Math.round((sorted.length / plan.durationSeconds) * 10) / 10,
    latency: { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: q(1), mean: sorted.length ? Math.round((sorted.reduce((a, b) => a + b, 0) / sorted.length) * 100) / 100 : 0 },
    errors,
    timeouts: 0,
    statuses,
    durationSeconds: Math.round(seconds * 10) / 10,
  };
}
