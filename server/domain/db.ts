import { JsonType, UnderscoreNamingStrategy } from '@mikro-orm/core';
import type { InferKyselyDB } from '@mikro-orm/sql';
import { sql, type Compilable, type Kysely, type Transaction } from 'kysely';
import { CompiledQuery, createDatabase, nameStatement, type DatabaseOptions } from '../infra/database/database.ts';
import { JsonValue, jsonValue, type JsonColumns } from '../infra/database/json-columns.ts';
import { entities } from './entities.ts';

/**
 * The database as Kysely sees it, typed from the entities (table and column
 * names in snake_case, as stored). The entities are the schema: a column the
 * entities do not declare is not in this type.
 */
export type DB = InferKyselyDB<(typeof entities)[number]>;

/** The jsonb columns of each table, as the entities declare them (`p.json`). */
export const jsonColumns: JsonColumns = (() => {
  const naming = new UnderscoreNamingStrategy();
  const byTable = new Map<string, Set<string>>();
  for (const entity of entities) {
    const meta = entity.meta;
    for (const [name, prop] of Object.entries(meta.properties)) {
      if (prop.type !== JsonType && !(prop.type instanceof JsonType)) continue;
      const table = meta.tableName ?? meta.collection;
      if (!byTable.has(table)) byTable.set(table, new Set());
      byTable.get(table)!.add(prop.fieldNames?.[0] ?? naming.propertyToColumnName(name));
    }
  }
  return byTable;
})();

/** The application's database (infra/database/database.ts) with the schema's jsonb columns. */
export function openDatabase(opts: Omit<DatabaseOptions, 'jsonColumns'>): Db {
  return createDatabase<DB>({ ...opts, jsonColumns });
}

/** The database handle every query takes: the pool, or an open transaction (`Tx`). */
export type Db = Kysely<DB>;
/** An open transaction: what a function that must run inside one asks for. */
export type Tx = Transaction<DB>;

let savepoints = 0;

/**
 * Runs `fn` in a transaction on `db`. Inside a transaction already, `fn` runs in
 * a savepoint of it: a failure rolls back `fn`'s work only and rethrows, and the
 * outer transaction goes on if its caller catches the error. With `join`, `fn`
 * runs in the outer transaction itself (no savepoint: two round trips fewer,
 * for callers whose failure fails the caller anyway).
 */
export async function transaction<T>(db: Db, fn: (tx: Tx) => Promise<T>, opts: { join?: boolean } = {}): Promise<T> {
  if (!db.isTransaction) return db.transaction().execute(fn);
  if (opts.join) return fn(db as Tx);
  const name = sql.id(`sp_${++savepoints}`);
  await sql`SAVEPOINT ${name}`.execute(db);
  try {
    const result = await fn(db as Tx);
    await sql`RELEASE SAVEPOINT ${name}`.execute(db);
    return result;
  } catch (err) {
    await sql`ROLLBACK TO SAVEPOINT ${name}`.execute(db);
    throw err;
  }
}

/** A parameter of a prepared statement, standing where its value will go while the statement compiles. */
class Param {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/** A statement compiled once; see `prepared`. */
export interface PreparedStatement<P, O> {
  /** Runs on `db` (its transaction when it is one). */
  execute(db: Db, params: P): Promise<O[]>;
  executeTakeFirst(db: Db, params: P): Promise<O | undefined>;
}

/**
 * A hot-path statement built with the typed builder once, compiled once, then
 * run with new values: the same SQL and row types as the builder's, without
 * building and compiling the query on every request, and sent as a named
 * statement (infra/database/database.ts). `$.name` stands for a parameter:
 * `prepared((k, $: { id: number }) => k.selectFrom('payment_intents').select('uuid').where('id', '=', $.id))`,
 * then `.execute(db, { id })`. A parameter stands where one value goes: a
 * statement whose shape depends on the input needs one prepared statement per
 * shape (or `= ANY($.list)`).
 */
export function prepared<P extends object, O>(build: (db: Db, $: P) => Compilable<O>): PreparedStatement<P, O> {
  let compiled: { slots: Array<{ fixed: unknown } | { name: string; json: boolean }>; query: CompiledQuery } | null = null;
  const compile = (db: Db) => {
    if (compiled) return compiled;
    const $ = new Proxy({}, { get: (_, name) => new Param(String(name)) }) as P;
    const query = build(db, $).compile();
    nameStatement(query.sql);
    const slotOf = (v: unknown) =>
      v instanceof Param ? { name: v.name, json: false } : v instanceof JsonValue && v.value instanceof Param ? { name: v.value.name, json: true } : { fixed: v };
    compiled = { query, slots: query.parameters.map(slotOf) };
    return compiled;
  };
  const execute = async (db: Db, params: P): Promise<O[]> => {
    const c = compile(db);
    const values = params as Record<string, unknown>;
    const parameters = c.slots.map((s) => ('fixed' in s ? s.fixed : s.json ? jsonValue(values[s.name]) : values[s.name]));
    return (await db.executeQuery<O>({ ...c.query, parameters })).rows;
  };
  return { execute, executeTakeFirst: async (db, params) => (await execute(db, params))[0] };
}

/**
 * A statement over a list of rows (a multi-row VALUES), compiled once per row
 * count: `build` gets one placeholder row per row, each of its `columns`
 * standing for that row's value. A VALUES list has one shape per count, so use
 * it for batches with a small maximum.
 */
export function preparedPerRowCount<R extends object, O>(
  columns: ReadonlyArray<keyof R & string>,
  build: (db: Db, rows: R[]) => Compilable<O>,
): (db: Db, rows: readonly R[]) => Promise<O[]> {
  const byCount = new Map<number, PreparedStatement<Record<string, unknown>, O>>();
  return (db, rows) => {
    let statement = byCount.get(rows.length);
    if (!statement) {
      const n = rows.length;
      statement = prepared((k, $: Record<string, unknown>) => build(k, Array.from({ length: n }, (_, i) => Object.fromEntries(columns.map((c) => [c, $[`${i}:${c}`]])) as R)));
      byCount.set(n, statement);
    }
    const values: Record<string, unknown> = {};
    rows.forEach((row, i) => {
      for (const c of columns) values[`${i}:${c}`] = row[c];
    });
    return statement.execute(db, values);
  };
}

/**
 * A raw statement of fixed text with `$1`..`$n` parameters (each use says why the
 * builder cannot write it), sent as a named statement like the compiled ones.
 * Runs on `db` (its transaction when it is one).
 */
export function rawStatement<R>(text: string): (db: Db, params: readonly unknown[]) => Promise<R[]> {
  nameStatement(text);
  return async (db, params) => (await db.executeQuery<R>(CompiledQuery.raw(text, [...params]))).rows;
}

/**
 * Holds a transaction-scoped advisory lock on `key` until the transaction ends:
 * serialises concurrent writers of one thing that has no row to lock (a setting
 * set, an exchange-rate pair, the first run).
 */
export async function lockKey(tx: Db, key: string): Promise<void> {
  await tx.selectNoFrom((eb) => eb.fn('pg_advisory_xact_lock', [eb.fn('hashtext', [eb.val(key)])]).as('locked')).execute();
}

/**
 * Whole UTC days, computed by the database from a calendar date (`YYYY-MM-DD`):
 * the first moment of the day, and the first moment after it (an inclusive
 * `to` date as an exclusive bound). The list filters of the admin and merchant
 * APIs take their `from`/`to` this way.
 */
export const utcDayStart = (date: string) => sql<Date>`(${date}::date)::timestamp AT TIME ZONE 'UTC'`;
export const utcDayAfter = (date: string) => sql<Date>`((${date}::date + 1)::timestamp AT TIME ZONE 'UTC')`;
