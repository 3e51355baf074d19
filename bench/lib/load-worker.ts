import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { LoadPlan, LoadTargets } from './load.ts';

/**
 * The load generator, in a process of its own (so it never shares an event
 * loop with a server). Receives a plan over IPC, runs autocannon, and sends
 * back its summary. Each request is set up from the targets file: a path, the
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
  const statuses: Record<string, number> = {};
  const instance = autocannon({
    url: plan.url,
    connections: plan.connections,
    duration: plan.durationSeconds,
    // Open loop at a fixed rate when given (latency at a stated load), else as fast as the server answers.
    ...(plan.rate ? { overallRate: plan.rate } : {}),
    // A request that takes longer than this counts as an error, not a slow sample.
    timeout: 30,
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => {
          const [tokenIndex, path, body] = next();
          const headers: Record<string, string> = { authorization: `Bearer ${targets.tokens[tokenIndex]}` };
          if (body !== null) headers['content-type'] = 'application/json';
          if (targets.idempotencyKey) headers['idempotency-key'] = randomUUID();
          return { ...req, method: targets.method, path, headers, body: body ?? undefined };
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
