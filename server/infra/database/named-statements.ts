import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

/**
 * Server-side prepared statements for the statements compiled once
 * (convert-values.ts `prepare`): PostgreSQL parses and plans such a statement
 * once per connection and then only binds and executes it, instead of parsing,
 * rewriting and planning its text on every request.
 *
 * Kysely hands `pg` a statement as text and values only (its PostgresConnection
 * calls `client.query(sql, parameters)`), so the name is added here, under it:
 * each pooled client's `query` sends a registered text as a named statement.
 * `pg` keeps the names a connection has parsed (`connection.parsedStatements`)
 * and sends Parse only the first time. The name is a digest of the text, so one
 * name never stands for two texts. Anything else passes through unchanged.
 *
 * PostgreSQL plans a named statement for its values for the first five runs,
 * then keeps a generic plan only if it is not estimated to cost more
 * (plan_cache_mode = auto); DDL on a table it reads invalidates the plan.
 * Behind a pooler in transaction mode, named statements need its support for
 * them (PgBouncer 1.21+ `max_prepared_statements`); DATABASE_NAMED_STATEMENTS=false
 * turns them off (config.ts).
 */
const names = new Map<string, string>();

/** Registers `sql` to be sent as a named statement on every connection of a pool with them on. */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `pc_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`);
}

type Query = PoolClient['query'];

/** Makes every client of `pool` send the registered statements by name (see above). */
export function useNamedStatements(pool: Pool): void {
  pool.on('connect', (client) => {
    // The prototype's query, looked up on every call (not bound once here), so whatever wraps
    // pg.Client.prototype.query later (the tests count statements that way) still sees every statement.
    const query = (...args: unknown[]) => (Object.getPrototypeOf(client) as { query: (...a: unknown[]) => unknown }).query.apply(client, args);
    client.query = ((config: unknown, ...rest: unknown[]) => {
      const values = rest[0];
      if (typeof config === 'string' && Array.isArray(values)) {
        const name = names.get(config);
        if (name) return query({ name, text: config, values }, ...rest.slice(1));
      }
      return query(config, ...rest);
    }) as Query;
  });
}
