import os from 'node:os';
import { startBenchDatabase, statementStats } from './lib/database.ts';
import { postgresCpuMs, processCpuMs } from './lib/processes.ts';
import { benchSecrets } from './lib/secrets.ts';
import { startBaseline, startOurs } from './lib/servers.ts';

/**
 * What a server does with no request at all: the CPU its process and
 * PostgreSQL's backends use per second, and the statements it sends
 * (pg_stat_statements), over IDLE_SECONDS (default 30) after a settling
 * period. That is the background work (job queue polling, scheduled sweeps,
 * their timers) every request shares the machine with; the baseline has none.
 * Usage: node bench/idle.ts. BENCH_OURS_ENV applies as for the benchmarks.
 */
const seconds = Number(process.env.IDLE_SECONDS ?? 30);
const settleSeconds = Number(process.env.IDLE_SETTLE_SECONDS ?? 10);

const db = await startBenchDatabase({ statements: true });
const port = new URL(db.url).port;
const secrets = benchSecrets();
const stats = statementStats(db.url);
const servers = [await startOurs(db.url, secrets, {}), await startBaseline(db.url, secrets)];
try {
  await new Promise((r) => setTimeout(r, settleSeconds * 1000));
  for (const s of servers) {
    await stats.reset();
    const [a0, p0] = [processCpuMs(s.child.pid), postgresCpuMs(port)];
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const [a1, p1] = [processCpuMs(s.child.pid), postgresCpuMs(port)];
    const all = await stats.read();
    const calls = all.reduce((a, q) => a + q.calls, 0);
    console.log(
      `${s.name}, idle ${seconds} s: process ${((a1 - a0) / seconds).toFixed(1)} ms CPU/s, PostgreSQL ${((p1 - p0) / seconds).toFixed(1)} ms CPU/s, ${calls} statements (${(calls / seconds).toFixed(1)}/s), load ${os.loadavg()[0]!.toFixed(2)}`,
    );
    for (const q of all.slice(0, 15)) console.log(`  ${String(q.calls).padStart(5)} ${String(q.totalMs).padStart(6)} ms  ${q.query}`);
    // The next one is measured alone.
    await s.child.stop();
  }
} finally {
  for (const s of servers) await s.child.stop();
  await db.stop();
}
