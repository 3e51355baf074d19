import type { Pool, PoolClient } from 'pg';

/** The pg-pool internals this guard relies on (stable across pg-pool 3.x). */
interface PoolInternals {
  _idle: Array<{ client: PoolClient }>;
  _clients: PoolClient[];
  _releaseOnce(client: PoolClient, idleListener: unknown): (err?: Error | boolean) => void;
}

/**
 * Gives the pool back the slots of connections that died while checked out.
 *
 * Kysely (under MikroORM) releases a transaction's connection only after its
 * COMMIT or ROLLBACK succeeds (kysely-org/kysely#1990). When the database goes
 * away mid-transaction both fail, the pg client is never released, and its
 * slot is lost for good: a few outages with transactions in flight exhaust the
 * pool and every later request waits for a connection that never comes, long
 * after the database is back (and shutdown hangs in pool.end()).
 *
 * So: when a checked-out client's connection ends, release it with an error
 * (the pool drops it and opens a fresh one on demand), and make release
 * idempotent so whoever releases it later is not told it was released twice.
 * A no-op if pg-pool's internals ever change shape.
 */
export function reclaimDeadClients(pool: Pool): void {
  const p = pool as unknown as PoolInternals;
  if (typeof p._releaseOnce !== 'function' || !Array.isArray(p._idle) || !Array.isArray(p._clients)) return;
  const releaseOnce = p._releaseOnce.bind(p);
  p._releaseOnce = (client, idleListener) => {
    const release = releaseOnce(client, idleListener);
    let released = false;
    return (err) => {
      if (released) return;
      released = true;
      release(err);
    };
  };
  pool.on('connect', (client) => {
    client.once('end', () => {
      const checkedOut = p._clients.includes(client) && !p._idle.some((i) => i.client === client);
      if (checkedOut && typeof client.release === 'function') client.release(new Error('connection ended while checked out'));
    });
  });
}
