import type { Pool, PoolClient, QueryResult } from 'pg';

/**
 * Fewer round trips and fewer writes on the pool's clients (in pipeline mode, orm.ts).
 *
 * BEGIN without its own round trip. Kysely (under MikroORM) opens a transaction
 * by sending `begin` and waiting for its answer before it lets the first
 * statement go. Nothing waits for anything in that answer, so here a client
 * answers `begin` at once and keeps it until the transaction's first statement,
 * and the two leave together; PostgreSQL runs them in order.
 *
 * BEGIN's real answer is not dropped: that first statement resolves only once
 * both answered, and rejects with BEGIN's error if BEGIN failed. A plain `begin`
 * fails only when its session cannot run anything either (the connection lost,
 * or a transaction already aborted), so that statement fails with it and
 * nothing of the transaction runs outside it.
 *
 * One write for statements sent together. `pg` 8.23 writes each query's
 * messages to the socket on their own (it corks the socket around one query), so
 * statements sent together (db.ts `pipelined`) still cost a system call each;
 * writing to PostgreSQL's socket was a fifth of our process's CPU time in the
 * SMS benchmarks (BENCHMARKS.md). `inOneWrite` corks the socket of every client
 * given a query while `send` runs, and uncorks them after: Node's stream then
 * writes everything buffered in one `writev`. The socket is `pg`'s own
 * (`client.connection.stream`, which its query.js corks the same way);
 * test/integration/pipelined.test.ts counts the writes, so a `pg` that moves it
 * fails there.
 *
 * Statements sent with the COMMIT: those handed over inside `atCommit` (db.ts
 * `sendWithCommit`) are kept and sent with the transaction's next statement,
 * normally its COMMIT, which fails if one of them did (see atCommit).
 *
 * Installed after useNamedStatements (named-statements.ts): it calls whatever
 * `query` a client had, and the prototype's otherwise, looked up on every call
 * (as there: whatever wraps the prototype later still sees every statement).
 */
export function pipelineTransactions(pool: Pool): void {
  pool.on('connect', (client) => {
    const own = Object.prototype.hasOwnProperty.call(client, 'query') ? client.query : null;
    const next = (...args: unknown[]) =>
      (own ?? (Object.getPrototypeOf(client) as { query: (...a: unknown[]) => unknown }).query).apply(client, args) as Promise<QueryResult>;
    let held: unknown[] | null = null;
    // Statements handed over inside atCommit: sent with the transaction's next statement, normally its COMMIT.
    let riders: Rider[] = [];
    // The first of them to fail since the transaction's last COMMIT or ROLLBACK: its COMMIT fails with it.
    let riderFailure: { error: unknown } | null = null;
    const send = (config: unknown, rest: unknown[]): Promise<QueryResult> => {
      const promised = rest.every((r) => typeof r !== 'function');
      if (promised && held === null && typeof config === 'string' && /^begin$/i.test(config) && (rest.length === 0 || (Array.isArray(rest[0]) && rest[0].length === 0))) {
        held = [config, ...rest];
        return Promise.resolve({ command: 'BEGIN', rowCount: null, oid: 0, rows: [], fields: [] } satisfies QueryResult);
      }
      if (held !== null) {
        const begin = held;
        held = null;
        return inOneWrite(() => {
          corkWhileBatching(client);
          const begun = next(...begin);
          // Handled below, with the statement's answer; this only keeps it from being reported as unhandled meanwhile.
          begun.catch(() => undefined);
          const result = next(config, ...rest);
          // (A query with a callback, which Kysely never sends, answers through it alone.)
          return promised ? Promise.all([begun, result]).then(([, r]) => r) : result;
        });
      }
      corkWhileBatching(client);
      return next(config, ...rest);
    };
    client.query = ((config: unknown, ...rest: unknown[]) => {
      if (holding !== null) {
        const rider = deferred(config, rest);
        riders.push(rider);
        return rider.promise;
      }
      const command = typeof config === 'string' ? config.trim().toLowerCase() : '';
      if (command === 'rollback') {
        // Never sent: the transaction ends without them.
        for (const r of riders) r.reject(new Error('the transaction was rolled back before its commit'));
        riders = [];
        riderFailure = null;
        return send(config, rest);
      }
      if (riders.length === 0) {
        if (command !== 'commit' || riderFailure === null) return send(config, rest);
      }
      const going = riders;
      riders = [];
      return inOneWrite(() => {
        for (const r of going) {
          send(r.config, r.rest).then(r.resolve, (error: unknown) => {
            riderFailure ??= { error };
            r.reject(error);
          });
        }
        const result = send(config, rest);
        if (command !== 'commit') return result;
        // PostgreSQL answers the COMMIT of a transaction a failed statement aborted with ROLLBACK, not an
        // error: the commit fails here instead, with that statement's error, once every rider has answered.
        const riderAnswers = going.map((r) => r.promise.catch(() => undefined));
        return Promise.allSettled([result, ...riderAnswers]).then(([committed]) => {
          const failure = riderFailure;
          riderFailure = null;
          if (failure !== null) throw failure.error;
          if (committed!.status === 'rejected') throw committed!.reason;
          return committed!.value;
        });
      });
    }) as PoolClient['query'];
  });
}

interface Rider {
  config: unknown;
  rest: unknown[];
  promise: Promise<QueryResult>;
  resolve(r: QueryResult): void;
  reject(e: unknown): void;
}

function deferred(config: unknown, rest: unknown[]): Rider {
  const { promise, resolve, reject } = Promise.withResolvers<QueryResult>();
  // Its failure reaches the COMMIT (or whoever awaits it); this only keeps it from being reported as unhandled.
  promise.catch(() => undefined);
  return { config, rest, promise, resolve, reject };
}

/** Set while atCommit's `hand` runs: the statements clients are given then wait for the transaction's next one. */
let holding: true | null = null;

/**
 * Runs `hand`, which hands queries to a transaction's client synchronously; the
 * client keeps them and sends them with the transaction's next statement, which
 * is normally its COMMIT: the last writes and COMMIT leave in one write and cost
 * one round trip. Their answers settle their own promises. Should one fail,
 * PostgreSQL has rolled the transaction back, and the COMMIT fails with that
 * statement's error (so the caller's transaction fails as if the statement had
 * been awaited). A ROLLBACK instead drops them unsent. Decisions must not need
 * their answers: nothing runs between them and the COMMIT.
 */
export function atCommit<T>(hand: () => T): T {
  if (holding !== null) return hand();
  holding = true;
  try {
    return hand();
  } finally {
    holding = null;
  }
}

/** While inOneWrite's `send` runs: how to uncork each socket it corked. */
let batch: Array<() => void> | null = null;

/**
 * Runs `send`, which hands queries to the pool's clients synchronously, with
 * each such client's socket corked until it returns: each client's queries leave
 * in one write (see above). Nested calls join the outermost.
 */
export function inOneWrite<T>(send: () => T): T {
  if (batch !== null) return send();
  batch = [];
  try {
    return send();
  } finally {
    const uncork = batch;
    batch = null;
    for (const u of uncork) u();
  }
}

const corked = new WeakSet<object>();
function corkWhileBatching(client: PoolClient): void {
  if (batch === null || corked.has(client)) return;
  const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
  if (!stream?.cork || !stream.uncork) return;
  stream.cork();
  corked.add(client);
  batch.push(() => {
    corked.delete(client);
    stream.uncork!();
  });
}
