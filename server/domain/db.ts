import type { InferKyselyDB } from '@mikro-orm/sql';
import { CompiledQuery, type Compilable, type Kysely, type QueryResult, type UnknownRow } from 'kysely';
import { ConvertValuesPlugin, prepare, type BoundStatement, type PreparedStatement } from '../infra/database/convert-values.ts';
import type { EntityManager } from '../infra/database/orm.ts';
import { nameStatement } from '../infra/database/named-statements.ts';
import { atCommit, inOneWrite } from '../infra/database/client-pipeline.ts';
import type { entities } from './entities.ts';

/**
 * The database as Kysely sees it, typed from the entities (table and column
 * names in snake_case, as stored). The entities are the schema: a column the
 * entities do not declare is not in this type.
 */
export type DB = InferKyselyDB<(typeof entities)[number]>;

/**
 * A typed query builder bound to `em`: inside `em.transactional(...)` it runs on
 * that transaction's connection, otherwise on the pool. For set-based and
 * hot-path statements (CTEs, `FOR UPDATE SKIP LOCKED`, `ON CONFLICT`, batch
 * claims); plain reads and writes go through the EntityManager.
 */
export function db(em: EntityManager): Kysely<DB> {
  // Value conversion: rows come back as the entities' types (Date for timestamptz,
  // number for bigint ids, parsed JSON), and Date/JSON parameters are converted
  // on the way in: this is the one way the application reads timestamps. Without
  // it the driver hands back PostgreSQL's text ('2026-11-25 02:44:40.83+00') and
  // ids as strings (checked against MikroORM 7.2's plugin/transformer.js).
  // This is `em.getKysely({ convertValues: true })` with MikroORM's plugin
  // replaced by ConvertValuesPlugin: the same conversions, without the lookups
  // that made it the largest CPU cost of a statement (see convert-values.ts).
  return em.getKysely<DB>().withPlugin(new ConvertValuesPlugin(em));
}

/**
 * A hot-path statement built with the typed builder and compiled once, then run
 * with new values (`prepare` in infra/database/convert-values.ts): the same SQL,
 * value conversion and row types as `db(em)`, without building and transforming
 * the query on every request. `$.name` stands for a parameter.
 */
export function prepared<P extends object, O>(build: (db: Kysely<DB>, $: P) => Compilable<O>): PreparedStatement<P, O> {
  return prepare<DB, P, O>(build);
}

/**
 * A statement over a list of rows (a multi-row VALUES), compiled once per row
 * count: `build` gets one placeholder row per row, each of its `columns`
 * standing for that row's value (parameters named `<row>:<column>`). A VALUES
 * list has one shape per count, so use it for batches with a small maximum.
 */
export function preparedPerRowCount<R extends object, O>(
  columns: ReadonlyArray<keyof R & string>,
  build: (db: Kysely<DB>, rows: R[]) => Compilable<O>,
): PerRowCountStatement<R, O> {
  const byCount = new Map<number, PreparedStatement<Record<string, unknown>, O>>();
  const compile = (n: number) =>
    prepared((k, $: Record<string, unknown>) => build(k, Array.from({ length: n }, (_, i) => Object.fromEntries(columns.map((c) => [c, $[`${i}:${c}`]])) as R)));
  const statementOf = (rows: readonly R[]) => {
    let statement = byCount.get(rows.length);
    if (!statement) byCount.set(rows.length, (statement = compile(rows.length)));
    const values: Record<string, unknown> = {};
    rows.forEach((row, i) => {
      for (const c of columns) values[`${i}:${c}`] = row[c];
    });
    return { statement, values };
  };
  const run = (em: EntityManager, rows: readonly R[]) => {
    const { statement, values } = statementOf(rows);
    return statement.execute(em, values);
  };
  return Object.assign(run, {
    bind(em: EntityManager, rows: readonly R[]) {
      const { statement, values } = statementOf(rows);
      return statement.bind(em, values);
    },
  });
}

/** A preparedPerRowCount statement: run it, or bind it to be sent with others (`pipelined`, `sendWithCommit`). */
export interface PerRowCountStatement<R, O> {
  (em: EntityManager, rows: readonly R[]): Promise<O[]>;
  bind(em: EntityManager, rows: readonly R[]): BoundStatement<O>;
}

/** A raw statement (rawStatement): run it, or bind it to be sent with others (`pipelined`). */
export interface RawStatement<R> {
  (em: EntityManager, params: readonly unknown[]): Promise<R[]>;
  bind(params: readonly unknown[]): BoundStatement<R>;
}

/**
 * A raw statement of fixed text with `$1`..`$n` parameters (each use says why the
 * builder cannot write it), sent as a named statement like the compiled ones
 * (infra/database/named-statements.ts). Runs on `em`'s transaction when it has
 * one; rows come back as `pg` parsed them, without value conversion.
 */
export function rawStatement<R>(text: string): RawStatement<R> {
  nameStatement(text);
  const bind = (params: readonly unknown[]): BoundStatement<R> => ({ query: CompiledQuery.raw(text, [...params]), rows: (result) => result.rows as R[] });
  const run = async (em: EntityManager, params: readonly unknown[]) => (await em.getKysely().executeQuery<R>(bind(params).query)).rows;
  return Object.assign(run, { bind });
}

type RowsOf<T extends readonly BoundStatement<unknown>[]> = { [K in keyof T]: T[K] extends BoundStatement<infer O> ? O[] : never };

/**
 * Sends `statements` on `em`'s connection (its transaction's, else one pooled
 * connection) without waiting for each answer before the next: one round trip
 * for all of them instead of one each (the pool's clients are in `pg`'s
 * pipeline mode, orm.ts). Returns each one's rows, in order.
 *
 * PostgreSQL still runs them one after the other, in order, and under READ
 * COMMITTED each takes its snapshot when it starts: a statement sees whatever
 * was committed before it began, including the commit of a lock holder that an
 * earlier statement of the same pipeline waited for. So a read may follow the
 * lock it depends on in one pipeline; what a statement cannot use is an earlier
 * one's answer (only the values known before sending).
 *
 * Every statement is waited for before returning or throwing, so the connection
 * is never handed on with statements of ours in flight. In a transaction, a
 * failed statement aborts it and every later one fails with it; the first
 * failure is thrown.
 */
export async function pipelined<T extends readonly BoundStatement<unknown>[]>(em: EntityManager, ...statements: T): Promise<RowsOf<T>> {
  const executor = em.getKysely().getExecutor();
  // Each executeQuery hands its query to the client before its first await, so inOneWrite sees them all.
  const settled = await executor.provideConnection(async (connection) =>
    Promise.allSettled(inOneWrite(() => statements.map((s) => connection.executeQuery<UnknownRow>(s.query)))),
  );
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s, i) => statements[i]!.rows((s as PromiseFulfilledResult<QueryResult<UnknownRow>>).value)) as RowsOf<T>;
}

/**
 * Hands `statements` to `em`'s transaction to be sent with its COMMIT (client-pipeline.ts
 * `atCommit`): the last writes of a transaction and its COMMIT in one round trip. Resolves
 * once they are handed over, not answered: the caller returns from its transaction callback
 * without waiting for them, and may not need their answers. Should one fail, the
 * transaction is rolled back and em.transactional() rejects with that statement's error.
 * So every check of what they write must be in the statements themselves
 * (`check_invariant`, migration 0026), none after them in code.
 */
export async function sendWithCommit(em: EntityManager, ...statements: ReadonlyArray<BoundStatement<unknown>>): Promise<void> {
  if (!em.isInTransaction()) throw new Error('sendWithCommit must run inside em.transactional()');
  if (statements.length === 0) return;
  await em.getKysely().getExecutor().provideConnection(async (connection) => {
    // Their failure reaches the COMMIT; caught here only so that it is not reported as unhandled as well.
    atCommit(() => statements.map((s) => connection.executeQuery<UnknownRow>(s.query).catch(() => undefined)));
  });
}
