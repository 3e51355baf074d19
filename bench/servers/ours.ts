import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import { createApp } from '../../server/app.ts';
import { bootstrap } from '../../server/bootstrap.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/infra/logger.ts';
import { createWorkerHealthApp } from '../../server/http/worker-health.ts';

/**
 * Our service as main.ts runs it (config from the environment -> bootstrap ->
 * createApp -> listen), in a process of its own, reporting its port over IPC.
 * SIGTERM closes it cleanly, which is also when `--cpu-prof` writes its profile.
 */
// Diagnostics (`--trace`): where requests spend their time and what else the process does meanwhile (lib/trace.ts).
const trace = process.env.BENCH_TRACE === '1' ? await import('../lib/trace.ts') : null;
trace?.installTrace();
const config = loadConfig(process.env);
const logger = createLogger({ level: config.LOG_LEVEL });
const runtime = await bootstrap(config, logger);
// SERVICE_ROLE=worker (the sizing benchmark's worker): its health listener only, as main.ts serves it.
const app = config.SERVICE_ROLE === 'worker' ? createWorkerHealthApp(runtime.deps) : createApp(runtime.deps);
const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
if (trace) trace.traceRequests(server);
process.on('message', (msg: { type?: string }) => {
  if (!trace) return;
  if (msg?.type === 'trace-reset') {
    trace.resetTrace();
    process.send?.({ type: 'trace-reset' });
  } else if (msg?.type === 'trace') process.send?.({ type: 'trace', summary: trace.summariseTrace() });
});

// Where the memory is, on request (bench diagnostics): the process totals and V8's heap spaces.
process.on('message', (msg: { type?: string; collect?: boolean }) => {
  if (msg?.type !== 'memory') return;
  // With --expose-gc (diagnostics): collect first, so heapUsed is what is retained, not garbage.
  const gc = (globalThis as { gc?: () => void }).gc;
  if (msg.collect && gc) gc();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 2 ** 20)]));
  const mb = (n: number) => Math.round(n / 2 ** 20);
  const m = process.memoryUsage();
  process.send?.({ type: 'memory', rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers), spaces });
});

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  runtime.deps.state.shuttingDown = true;
  server.closeAllConnections();
  server.close(() => {
    runtime.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
});
