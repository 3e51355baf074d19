import { createHash } from 'node:crypto';
import pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { Logger } from '../logger.ts';
import { JsonColumnsPlugin, type JsonColumns } from './json-columns.ts';

/**
 * The application's database: Kysely over a `pg` pool of its own, through a
 * driver of our own (Kysely's documented extension point, `Dialect`/`Driver`)
 * that uses only `pg`'s public API. MikroORM is not on this path: it keeps the
 * schema (entities), the migrations and `schema:check` (orm.ts).
 *
 * What the driver adds to Kysely's own PostgreSQL driver, and why:
 * - Values come back as the application reads them: `timestamptz` as `Date`
 *   (pg's default), `bigint` (and `bigint[]`) as JavaScript numbers (ids and
 *   counts; every bigint the schema holds is far below 2^53), `numeric` as a decimal string
 *   (money is never a float), `jsonb` parsed, `text[]` as arrays. Set per pool
 *   through pg's `types` option, so pg-boss's own pool is untouched.
 * - Statements registered with `nameStatement` (the compiled-once statements of
 *   server/domain/db.ts) go as named statements (pg's `{ name, text, values }`):
 *   PostgreSQL parses and plans them once per connection. The name is a digest
 *   of the text, so one name never means two texts. Behind a pooler in
 *   transaction mode without prepared-statement support, turn them off
 *   (`DATABASE_NAMED_STATEMENTS=false`).
 * - A transaction's BEGIN does not cost a round trip of its own: the clients are
 *   in pg's pipeline mode (`pipeline: true`), so BEGIN is sent at once and its
 *   answer is awaited together with the transaction's first statement (which
 *   fails with BEGIN's error if BEGIN failed).
 * - A value written to a jsonb column by a built statement is sent as JSON
 *   text (json-columns.ts), as the ORM did: pg alone would send an array as a
 *   PostgreSQL array and a string as itself.
 * - A client that reported an error while checked out (its connection lost) is
 *   handed back to the pool as broken, so the pool closes it instead of lending
 *   it again.
 */
export interface DatabaseOptions {
  url: string;
  poolMax: number;
  /** Connections the pool keeps open while idle. */
  poolMin?: number;
  /** How long a connection above poolMin stays open unused (pg-pool's default, 10 s, when unset). */
  poolIdleTimeoutMs?: number;
  /** Registered statements go as named (prepared) statements; default on. */
  namedStatements?: boolean;
  /** The jsonb columns, whose values are sent as JSON text (json-columns.ts). */
  jsonColumns?: JsonColumns;
  logger?: Logger;
}

/** Longest wait for a pooled connection before the request fails with 503. */
export const POOL_ACQUIRE_TIMEOUT_MS = 5000;

const INT8_OID = 20;
const INT8_ARRAY_OID = 1016;
const parseInt8 = (value: string) => Number(value);
const parseInt8Array = (value: string) => (pg.types.getTypeParser(INT8_ARRAY_OID as never, 'text')(value) as Array<string | null> | null)?.map((v) => (v === null ? null : Number(v))) ?? null;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    format === 'binary'
      ? pg.types.getTypeParser(oid, format)
      : oid === INT8_OID
        ? parseInt8
        : oid === INT8_ARRAY_OID
          ? parseInt8Array
          : pg.types.getTypeParser(oid, 'text')) as typeof pg.types.getTypeParser,
};

export function createDatabase<DB>(opts: DatabaseOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolMax,
    min: opts.poolMin ?? 0,
    ...(opts.poolIdleTimeoutMs ? { idleTimeoutMillis: opts.poolIdleTimeoutMs } : {}),
    // Fail fast instead of queueing without end: a request waits at most this long for a
    // pooled connection (all busy, or the database not answering) and then gets a 503.
    connectionTimeoutMillis: POOL_ACQUIRE_TIMEOUT_MS,
    // TCP keepalive lets the driver notice a database host that vanished.
    keepAlive: true,
    pipeline: true,
    types,
  } as pg.PoolConfig);
  // An idle client whose connection dies is reported here; without a listener it would end the process.
  pool.on('error', (err) => opts.logger?.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'idle database connection lost'));
  const db = new Kysely<DB>({
    dialect: new AppDialect(pool, opts.namedStatements !== false),
    plugins: opts.jsonColumns ? [new JsonColumnsPlugin(opts.jsonColumns)] : [],
  });
  pools.set(db, pool);
  return db;
}

/** A database handle of the application's (the pool or a transaction), for infra code that does not know its table types. */
export type AnyDb = Kysely<any>;

const pools = new WeakMap<object, pg.Pool>();

/** The pool under a database made by createDatabase, for its figures (totalCount, idleCount, waitingCount). */
 
export function databasePool(db: AnyDb): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('not a database made by createDatabase (a transaction has no pool of its own)');
  return pool;
}

/** Whether `err` is PostgreSQL's unique violation (SQLSTATE 23505), as pg reports it. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23505';
}

const names = new Map<string, string>();

/** Registers `sql` to be sent as a named statement (see above). */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `pc_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`);
}

class AppDialect implements Dialect {
  readonly #pool: pg.Pool;
  readonly #named: boolean;
  constructor(pool: pg.Pool, named: boolean) {
    this.#pool = pool;
    this.#named = named;
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new AppDriver(this.#pool, this.#named);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

/** The error a client reported while checked out, if any (its connection is then unusable). */
const clientErrors = new WeakMap<pg.PoolClient, Error>();
const listening = new WeakSet<pg.PoolClient>();

class AppDriver implements Driver {
  readonly pool: pg.Pool;
  readonly #named: boolean;
  constructor(pool: pg.Pool, named: boolean) {
    this.pool = pool;
    this.#named = named;
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect();
    if (!listening.has(client)) {
      // pg-pool listens only while the client is idle: remember an error raised while it is lent
      // out (and keep it from ending the process), so release() hands the client back as broken.
      listening.add(client);
      client.on('error', (err) => clientErrors.set(client, err));
    }
    return new AppConnection(client, this.#named);
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let text = 'BEGIN';
    if (settings.isolationLevel || settings.accessMode) {
      text = `START TRANSACTION${settings.isolationLevel ? ` ISOLATION LEVEL ${settings.isolationLevel.toUpperCase()}` : ''}${settings.accessMode ? ` ${settings.accessMode.toUpperCase()}` : ''}`;
    }
    (connection as AppConnection).begin(text);
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as AppConnection).end('COMMIT');
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as AppConnection).end('ROLLBACK');
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as AppConnection).release();
  }
  async destroy(): Promise<void> {
    await this.pool.end();
  }
}

class AppConnection implements DatabaseConnection {
  /** BEGIN, sent and not yet awaited (see above). */
  #begun: Promise<unknown> | null = null;
  readonly client: pg.PoolClient;
  readonly named: boolean;
  constructor(client: pg.PoolClient, named: boolean) {
    this.client = client;
    this.named = named;
  }

  begin(text: string): void {
    const begun = this.client.query(text);
    // Awaited with the next statement; this only keeps a failure from being reported as unhandled meanwhile.
    begun.catch(() => undefined);
    this.#begun = begun;
  }

  async end(text: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    const begun = this.#begun;
    this.#begun = null;
    // A transaction that ran no statement: COMMIT reports BEGIN's failure; ROLLBACK only needs to have run.
    const [b, e] = await Promise.allSettled([begun, this.client.query(text)]);
    const failure = text === 'COMMIT' && b.status === 'rejected' ? b.reason : e.status === 'rejected' ? e.reason : null;
    if (failure === null) return;
    if (text === 'ROLLBACK') {
      // A ROLLBACK fails only on a connection that cannot be used any more (the database went away).
      // Kysely hands a transaction's connection back only after its COMMIT or ROLLBACK succeeded
      // (kysely-org/kysely#1990), so it is handed back here, broken, or its pool slot would be lost.
      this.release(failure as Error);
    }
    throw failure;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const name = this.named ? names.get(query.sql) : undefined;
    const config = { ...(name ? { name } : {}), text: query.sql, values: query.parameters as unknown[] };
    const begun = this.#begun;
    this.#begun = null;
    let result: pg.QueryResult;
    if (begun === null) {
      result = await this.client.query(config);
    } else {
      const [b, r] = await Promise.allSettled([begun, this.client.query(config)]);
      if (b.status === 'rejected') throw b.reason;
      if (r.status === 'rejected') throw r.reason;
      result = r.value;
    }
    const { command, rowCount, rows } = result;
    return {
      rows: (rows ?? []) as R[],
      ...(command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not used by this application');
  }

  #released = false;
  /** Hands the client back to the pool, as broken if it failed; only the first call counts. */
  release(failure?: Error): void {
    if (this.#released) return;
    this.#released = true;
    this.client.release(failure ?? clientErrors.get(this.client) ?? undefined);
  }
}

export { CompiledQuery };
