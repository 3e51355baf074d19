import type { Pool, PoolClient, QueryResult } from 'pg';

/**
 * BEGIN without its own round trip. Kysely (under MikroORM) opens a transaction
 * by sending `begin` and waiting for its answer before it lets the first
 * statement go. Nothing waits for anything in that answer, so here a client
 * answers `begin` at once and sends it on; with the pool's clients in pipeline
 * mode (orm.ts) the transaction's first statement follows it on the wire
 * without waiting, and PostgreSQL runs them in order.
 *
 * BEGIN's real answer is not dropped: the first statement after it resolves
 * only once both answered, and rejects with BEGIN's error if BEGIN failed. A
 * plain `begin` fails only when its session cannot run anything either (the
 * connection lost, or a transaction already aborted), so that statement fails
 * with it and nothing of the transaction runs outside it.
 *
 * Installed after useNamedStatements (named-statements.ts): it calls whatever
 * `query` a client had, and the prototype's otherwise, looked up on every call
 * (as there: whatever wraps the prototype later still sees every statement).
 */
export function answerBeginEarly(pool: Pool): void {
  pool.on('connect', (client) => {
    const own = Object.prototype.hasOwnProperty.call(client, 'query') ? client.query : null;
    const next = (...args: unknown[]) =>
      (own ?? (Object.getPrototypeOf(client) as { query: (...a: unknown[]) => unknown }).query).apply(client, args) as Promise<QueryResult>;
    let begun: Promise<QueryResult> | null = null;
    client.query = ((config: unknown, ...rest: unknown[]) => {
      const promised = rest.every((r) => typeof r !== 'function');
      if (promised && typeof config === 'string' && /^begin$/i.test(config) && (rest.length === 0 || (Array.isArray(rest[0]) && rest[0].length === 0))) {
        const sent = next(config, ...rest);
        // Handled when the next statement settles; this only keeps it from being reported as unhandled meanwhile.
        sent.catch(() => undefined);
        begun = sent;
        return Promise.resolve({ command: 'BEGIN', rowCount: null, oid: 0, rows: [], fields: [] } satisfies QueryResult);
      }
      if (begun && promised) {
        const before = begun;
        begun = null;
        const result = next(config, ...rest);
        return Promise.all([before, result]).then(([, r]) => r);
      }
      return next(config, ...rest);
    }) as PoolClient['query'];
  });
}
