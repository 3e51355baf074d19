import { sql } from 'kysely';
import type { z } from 'zod';
import type { readinessSchema } from '../../contract/system.ts';
import type { AppDeps } from '../deps.ts';

type Readiness = z.infer<typeof readinessSchema>;
type Check = Readiness['checks']['database'];

async function timed(check: () => Promise<unknown>, timeoutMs: number): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { status: 'ok', latency_ms: Math.round((performance.now() - started) * 10) / 10, error: null };
  } catch (err) {
    // Only the error's message: driver errors can carry the connection string.
    const message = err instanceof Error ? err.message.replace(/postgres(ql)?:\/\/\S+/g, '[url]') : 'failed';
    return { status: 'error', latency_ms: null, error: message.slice(0, 200) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether this process can do its role's work: every role needs the database;
 * the roles that work jobs (`all`, `worker`) need the job queue too. An `api`
 * process only enqueues, inside its own transactions, so the database is all it
 * depends on. Not ready as soon as shutdown starts, so a balancer stops sending.
 */
export async function readiness(deps: Pick<AppDeps, 'config' | 'db' | 'reads' | 'boss' | 'state'>): Promise<{ ready: boolean; data: Readiness }> {
  const role = deps.config.SERVICE_ROLE;
  const replica = deps.reads.replica;
  const [database, jobs, read_replica] = await Promise.all([
    // Raw SQL: a round trip to the database and nothing else; there is no table to build a query on.
    timed(() => sql`SELECT 1`.execute(deps.db), 2000),
    role === 'api' ? null : timed(() => deps.boss.schemaVersion(), 2000),
    // Reported, never a reason to be unready: lag-tolerant reads go to the primary while it is down.
    replica ? timed(() => sql`SELECT 1`.execute(replica), 2000) : null,
  ]);
  const ready = database.status === 'ok' && (jobs === null || jobs.status === 'ok') && !deps.state.shuttingDown;
  return {
    ready,
    data: { status: ready ? 'ready' : 'not_ready', role, checks: { database, ...(jobs ? { jobs } : {}), read_replica }, server_time: new Date().toISOString() },
  };
}
