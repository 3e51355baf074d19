import { initServer } from '@ts-rest/express';
import { sql } from 'kysely';
import { contract } from '../../../contract/index.ts';
import type { AppDeps } from '../../deps.ts';

const s = initServer();

async function timed(check: () => Promise<unknown>, timeoutMs: number) {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { status: 'ok' as const, latency_ms: Math.round((performance.now() - started) * 10) / 10, error: null };
  } catch (err) {
    // Only the error's message: driver errors can carry the connection string.
    const message = err instanceof Error ? err.message.replace(/postgres(ql)?:\/\/\S+/g, '[url]') : 'failed';
    return { status: 'error' as const, latency_ms: null, error: message.slice(0, 200) };
  } finally {
    clearTimeout(timer);
  }
}

export function systemHandlers(deps: AppDeps) {
  return s.router(contract.system, {
    health: async () => ({ status: 200, body: { success: true, data: { status: 'ok', server_time: new Date().toISOString() } } }),
    ready: async () => {
      const replica = deps.reads.replica;
      const [database, jobs, read_replica] = await Promise.all([
        // Raw SQL: a round trip to the database and nothing else; there is no table to build a query on.
        timed(() => sql`SELECT 1`.execute(deps.db), 2000),
        timed(() => deps.boss.schemaVersion(), 2000),
        replica ? timed(() => sql`SELECT 1`.execute(replica), 2000) : null,
      ]);
      const ready = database.status === 'ok' && jobs.status === 'ok' && !deps.state.shuttingDown;
      const data = { status: ready ? ('ready' as const) : ('not_ready' as const), checks: { database, jobs, read_replica }, server_time: new Date().toISOString() };
      return ready ? { status: 200, body: { success: true, data } } : { status: 503, body: { success: true, data } };
    },
  });
}
