import type { EntityMetadata, EntityProperty, MetadataStorage } from '@mikro-orm/core';
import {
  DeleteQueryNode,
  InsertQueryNode,
  SelectQueryNode,
  UpdateQueryNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  type Compilable,
  type CompiledQuery,
  type Kysely,
} from 'kysely';
import type { EntityManager } from './orm.ts';
import { nameStatement } from './named-statements.ts';

/**
 * MikroORM 7.2's value conversion for Kysely queries (what
 * `em.getKysely({ convertValues: true })` installs: MikroKyselyPlugin), with the
 * same conversions but without its per-statement lookups. Profiles of the merchant
 * reads and intent creation (BENCHMARKS.md, "Data layer") showed the plugin as
 * the largest cost of a statement in our process, more than the statement's
 * round trip: for the payment view, 430 µs of CPU to convert one row and 95 µs
 * to transform the query, against 160 µs for sending it and reading the answer.
 * Where it goes, in `@mikro-orm/sql/plugin/transformer.js`:
 *
 * - `transformResult` rebuilds, on every statement, a map from every column name
 *   of every entity in the query (plain, `alias.column`, `alias_column`,
 *   `alias__column` and the property name: hundreds of string keys for a
 *   four-table join) to its property, and then walks that whole map for each row.
 *   Here the map is built once per query shape (the aliases and entities the
 *   transformer found, per ORM) with the transformer's own `buildGlobalFieldMap`,
 *   and a row is converted by walking its own columns. A column converts with the
 *   same property and the same `prepareOutputValue` as before, so the rows are
 *   identical.
 * - `findEntityMetadata` looks a table name up by class name and then by a
 *   linear search over every entity, and `findProperty` finds a snake_case
 *   column by a linear search over the entity's properties; both run for every
 *   table and every compared column of every statement. Here both answers are
 *   remembered per metadata storage (entities do not change after discovery).
 *
 * The transformer class is not exported by the package (its `exports` name only
 * the index), so it is loaded from its file next to the index. If MikroORM moves
 * it, this import fails at start-up and every test that touches the database
 * fails with it: the fast path cannot silently turn off.
 */

interface Transformer {
  reset(): void;
  transformNode<T extends OperationNode | undefined>(node: T, queryId?: QueryId): T;
  getOutputEntityMap(): Map<string, EntityMetadata>;
  buildGlobalFieldMap(entityMap: Map<string, EntityMetadata>): Record<string, EntityProperty>;
  prepareOutputValue(prop: EntityProperty | undefined, value: unknown): unknown;
  findEntityMetadata(name: string): EntityMetadata | undefined;
  findProperty(meta: EntityMetadata | undefined, columnName?: string): EntityProperty | undefined;
  prepareInputValue(prop: EntityProperty | undefined, value: unknown, enabled: boolean): unknown;
}
type TransformerClass = new (em: EntityManager, options: { convertValues: boolean }) => Transformer;

const transformerFile = new URL('./plugin/transformer.js', import.meta.resolve('@mikro-orm/sql')).href;
const { MikroTransformer } = (await import(transformerFile)) as { MikroTransformer: TransformerClass };

/** Column name -> the property whose conversion applies (what MikroORM's transformRow would use). */
type FieldMap = Map<string, EntityProperty>;

interface MetadataCaches {
  entities: Map<string, EntityMetadata | undefined>;
  properties: WeakMap<EntityMetadata, Map<string, EntityProperty | undefined>>;
  fieldMaps: Map<string, FieldMap>;
}
const caches = new WeakMap<MetadataStorage, MetadataCaches>();
function cachesOf(metadata: MetadataStorage): MetadataCaches {
  let c = caches.get(metadata);
  if (!c) caches.set(metadata, (c = { entities: new Map(), properties: new WeakMap(), fieldMaps: new Map() }));
  return c;
}

/** A parameter of a prepared statement (see `prepare`), standing where its value will go. */
class Param {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/**
 * The transformer with its two lookups remembered; everything else is MikroORM's.
 * While a prepared statement compiles, a parameter is left in place and the
 * property whose conversion applies to it is noted instead (`params`).
 */
class CachingTransformer extends MikroTransformer {
  readonly caches: MetadataCaches;
  params: Map<Param, EntityProperty | undefined> | null = null;
  constructor(em: EntityManager) {
    super(em, { convertValues: true });
    this.caches = cachesOf(em.getMetadata());
  }
  override prepareInputValue(prop: EntityProperty | undefined, value: unknown, enabled: boolean): unknown {
    if (value instanceof Param) {
      if (!this.params) throw new Error(`prepared parameter ${value.name} used outside prepare()`);
      this.params.set(value, enabled ? prop : undefined);
      return value;
    }
    return super.prepareInputValue(prop, value, enabled);
  }
  override findEntityMetadata(name: string): EntityMetadata | undefined {
    const known = this.caches.entities;
    if (known.has(name)) return known.get(name);
    const meta = super.findEntityMetadata(name);
    known.set(name, meta);
    return meta;
  }
  override findProperty(meta: EntityMetadata | undefined, columnName?: string): EntityProperty | undefined {
    if (!meta || !columnName) return undefined;
    let byColumn = this.caches.properties.get(meta);
    if (!byColumn) this.caches.properties.set(meta, (byColumn = new Map()));
    if (byColumn.has(columnName)) return byColumn.get(columnName);
    const prop = super.findProperty(meta, columnName);
    byColumn.set(columnName, prop);
    return prop;
  }
}

/** The field map of a query's entities, built once per shape (aliases and entities in the transformer's order). */
function fieldMapOf(t: CachingTransformer, entityMap: Map<string, EntityMetadata>): FieldMap | null {
  if (entityMap.size === 0) return null;
  let key = '';
  for (const [alias, meta] of entityMap) key += `${alias}\u0000${meta.uniqueName}\u0000`;
  let map = t.caches.fieldMaps.get(key);
  if (!map) {
    // Own keys only: a column named like an Object.prototype member must not find a "property".
    map = new Map(Object.entries(t.buildGlobalFieldMap(entityMap)));
    t.caches.fieldMaps.set(key, map);
  }
  return map;
}

/** Field maps of queries compiled and not yet answered, by query id (as MikroKyselyPlugin keeps its entity maps). */
const pending = new WeakMap<QueryId, FieldMap>();

export class ConvertValuesPlugin implements KyselyPlugin {
  readonly #t: CachingTransformer;
  constructor(em: EntityManager, transformer = new CachingTransformer(em)) {
    this.#t = transformer;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.#t.reset();
    const node = this.#t.transformNode(args.node, args.queryId);
    if (SelectQueryNode.is(args.node) || InsertQueryNode.is(args.node) || UpdateQueryNode.is(args.node) || DeleteQueryNode.is(args.node)) {
      const map = fieldMapOf(this.#t, this.#t.getOutputEntityMap());
      if (map) pending.set(args.queryId, map);
    }
    return node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const map = pending.get(args.queryId);
    const rows = args.result.rows;
    if (!map || !rows?.length) return args.result;
    return { ...args.result, rows: convertRows(this.#t, map, rows) };
  }
}

function convertRows(t: CachingTransformer, map: FieldMap, rows: UnknownRow[]): UnknownRow[] {
  return rows.map((row) => {
    const out: UnknownRow = { ...row };
    for (const column in row) {
      const prop = map.get(column);
      if (prop) out[column] = t.prepareOutputValue(prop, row[column]);
    }
    return out;
  });
}

/**
 * A statement with its values, not sent yet: what `pipelined` (db.ts) sends
 * together with others. `rows` turns its result into the rows `execute` would
 * have returned.
 */
export interface BoundStatement<O> {
  query: CompiledQuery;
  rows(result: QueryResult<UnknownRow>): O[];
}

/** A statement compiled once per ORM; see `prepare`. */
export interface PreparedStatement<P, O> {
  /** Runs on `em`'s transaction when it has one, else on the pool; rows converted as the builder's would be. */
  execute(em: EntityManager, params: P): Promise<O[]>;
  executeTakeFirst(em: EntityManager, params: P): Promise<O | undefined>;
  /** The statement with these values, to be sent with others (db.ts `pipelined`). */
  bind(em: EntityManager, params: P): BoundStatement<O>;
}

interface Compiled {
  query: CompiledQuery;
  /** Per parameter position: a fixed value, or a named parameter with the property that converts it. */
  slots: Array<{ fixed: unknown } | { name: string; prop: EntityProperty | undefined }>;
  fields: FieldMap | null;
  transformer: CachingTransformer;
}

/**
 * A statement built with the typed builder once and compiled once per ORM, then
 * run with new parameter values. For the hot paths: building a query with
 * Kysely and passing it through the conversion plugin costs more CPU than the
 * round trip itself for the larger queries (BENCHMARKS.md, "Data layer"), and the
 * statement is the same on every request but for its values.
 *
 * `build` receives the builder and `$`, whose properties stand for the
 * parameters (`where('uuid', '=', $.uuid)`). The SQL is what the builder would
 * send; each value is converted as the builder would convert it at that place
 * (the property MikroORM's plugin chose there while compiling), and rows come
 * back converted as by `db(em)`. A parameter must stand where one value goes:
 * not as a list, a column name or anything that changes the statement's shape;
 * a statement whose shape depends on the values needs one prepared statement per
 * shape.
 */
export function prepare<DB, P extends object, O>(build: (db: Kysely<DB>, $: P) => Compilable<O>): PreparedStatement<P, O> {
  const byOrm = new WeakMap<MetadataStorage, Compiled>();
  const compiledFor = (em: EntityManager): Compiled => {
    const metadata = em.getMetadata();
    const known = byOrm.get(metadata);
    if (known) return known;
    const transformer = new CachingTransformer(em);
    transformer.params = new Map();
    const $ = new Proxy({}, { get: (_, name) => new Param(String(name)) }) as P;
    const kysely = (em.getKysely() as unknown as Kysely<DB>).withPlugin(new ConvertValuesPlugin(em, transformer));
    const query = build(kysely, $).compile();
    nameStatement(query.sql);
    const props = transformer.params;
    transformer.params = null;
    const slots = query.parameters.map((v) => (v instanceof Param ? { name: v.name, prop: props.get(v) } : { fixed: v }));
    const compiled: Compiled = { query, slots, fields: pending.get(query.queryId) ?? null, transformer };
    byOrm.set(metadata, compiled);
    return compiled;
  };
  const bind = (em: EntityManager, params: P): BoundStatement<O> => {
    const c = compiledFor(em);
    const values = params as Record<string, unknown>;
    const parameters = c.slots.map((s) => ('fixed' in s ? s.fixed : c.transformer.prepareInputValue(s.prop, values[s.name], true)));
    return {
      query: { ...c.query, parameters },
      rows: (result) => (c.fields && result.rows.length ? convertRows(c.transformer, c.fields, result.rows) : result.rows) as O[],
    };
  };
  const execute = async (em: EntityManager, params: P): Promise<O[]> => {
    const bound = bind(em, params);
    return bound.rows(await em.getKysely().executeQuery<UnknownRow>(bound.query));
  };
  return {
    execute,
    executeTakeFirst: async (em, params) => (await execute(em, params))[0],
    bind,
  };
}
