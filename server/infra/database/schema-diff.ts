import { DatabaseSchema, SchemaComparator, type SchemaDifference, type SqlSchemaGenerator } from '@mikro-orm/postgresql';
import type { Orm } from './orm.ts';

/**
 * Tables allowed to differ from their entities. Empty: every table matches its
 * entity, and the check fails on any difference. The mechanism stays for a
 * conversion done area by area: a listed table is reported but does not fail,
 * and the check fails once a listed table has come to match, so the list can
 * only shrink.
 */
export const TABLES_NOT_YET_MATCHING: readonly string[] = [];

/**
 * A month partition a job creates and drops at run time (`<table>_pYYYYMM`,
 * domain/retention): the entity declares the partitioning and its default
 * partition, which migrations create; the months come and go with the
 * calendar, so no entity can list them, and the comparison leaves them out.
 */
export function isRuntimeMonthPartition(table: string, partition: string): boolean {
  return partition.length === table.length + 8 && partition.startsWith(`${table}_p`) && /^\d{6}$/.test(partition.slice(table.length + 2));
}

/** The introspected schema without the run-time month partitions, through DatabaseTable's partitioning accessors. */
function withoutRuntimePartitions(schema: DatabaseSchema): void {
  for (const table of schema.getTables()) {
    const partitioning = table.getPartitioning();
    if (!partitioning) continue;
    table.setPartitioning({ ...partitioning, partitions: partitioning.partitions.filter((p) => !isRuntimeMonthPartition(table.name, p.name)) });
  }
}

export interface SchemaDrift {
  /** Every table whose entity differs from the database (or has no entity, or no table), sorted. */
  tables: string[];
  /**
   * The SQL that would bring the database to the entities, for the tables not
   * in `ignoreTables` (what `orm.schema.getUpdateSchemaSQL()` prints when
   * nothing is ignored); '' when they agree.
   */
  sql: string;
}

/**
 * Compares the database `orm` is connected to with the entities, as
 * `orm.schema.getUpdateSchemaSQL()` does (same introspection, comparator and
 * SQL rendering, with the ORM's `schemaGenerator` options: triggers and
 * functions, which entities cannot declare, are left out), but keeps the
 * difference per table so a temporary allow-list can set some aside.
 */
export async function schemaDrift(orm: Orm, ignoreTables: readonly string[] = []): Promise<SchemaDrift> {
  const generator = orm.schema as SqlSchemaGenerator;
  const config = orm.config;
  const platform = orm.em.getPlatform();
  const { skipTables, skipViews } = config.get('schemaGenerator');
  const toSchema = generator.getTargetSchema();
  const fromSchema = await DatabaseSchema.create(orm.em.getConnection(), platform, config, undefined, toSchema.getNamespaces(), undefined, skipTables, skipViews);
  withoutRuntimePartitions(fromSchema);
  fromSchema.prune(undefined, []);
  toSchema.prune(undefined, []);
  const diff = new SchemaComparator(platform).compare(fromSchema, toSchema);
  // The comparator keys some tables as `public.name` and others as `name`.
  const defaultSchema = `${platform.getDefaultSchemaName()}.`;
  const bare = (name: string) => (name.startsWith(defaultSchema) ? name.slice(defaultSchema.length) : name);
  const tables = [...new Set([...Object.keys(diff.newTables), ...Object.keys(diff.changedTables), ...Object.keys(diff.removedTables)].map(bare))].sort();
  const ignored = new Set(ignoreTables);
  const sql = generator.diffToSQL(withoutTables(diff, (name) => ignored.has(bare(name))), { wrap: false, safe: false, dropTables: true }).trim();
  return { tables, sql };
}

function withoutTables(diff: SchemaDifference, ignored: (table: string) => boolean): SchemaDifference {
  const keep = <T>(dict: Record<string, T>) => Object.fromEntries(Object.entries(dict).filter(([name]) => !ignored(name)));
  return {
    ...diff,
    newTables: keep(diff.newTables),
    changedTables: keep(diff.changedTables),
    removedTables: keep(diff.removedTables),
    // Foreign keys dropped because a removed table goes away belong to that table's entry.
    orphanedForeignKeys: diff.orphanedForeignKeys.filter((fk) => !ignored(fk.localTableName) && !ignored(fk.referencedTableName)),
  };
}

export interface SchemaCheck {
  /** True when every table outside the allow-list matches and every allow-listed table is still off. */
  ok: boolean;
  /** SQL that would bring the tables outside the allow-list to their entities ('' when none differ). */
  sql: string;
  /** Tables outside the allow-list that differ. */
  drifted: string[];
  /** Allow-listed tables that still differ (the work left). */
  pending: string[];
  /** Allow-listed tables that now match: remove them from the list. */
  stale: string[];
}

/** The project's schema check: the migrated database against the entities, with the allow-list applied. */
export async function checkSchema(orm: Orm, allowList: readonly string[] = TABLES_NOT_YET_MATCHING): Promise<SchemaCheck> {
  const drift = await schemaDrift(orm, allowList);
  const allowed = new Set(allowList);
  const drifted = drift.tables.filter((t) => !allowed.has(t));
  const pending = drift.tables.filter((t) => allowed.has(t));
  const stale = [...allowed].filter((t) => !drift.tables.includes(t)).sort();
  return { ok: drifted.length === 0 && drift.sql === '' && stale.length === 0, sql: drift.sql, drifted, pending, stale };
}

/** A human-readable account of a check, for the script and the test's failure message. */
export function describeSchemaCheck(check: SchemaCheck): string {
  const lines: string[] = [];
  if (check.sql) {
    lines.push(`The migrated database and the entities differ (${check.drifted.join(', ') || 'see below'}).`);
    lines.push('Make the entities match the migrations, or, for an intended change, run `npm run migration:create -- <name>`.');
    lines.push('SQL that would bring the database to the entities:', '', check.sql, '');
  }
  if (check.stale.length) {
    lines.push(`These tables now match their entities: remove them from TABLES_NOT_YET_MATCHING (server/infra/database/schema-diff.ts): ${check.stale.join(', ')}`);
  }
  if (check.pending.length) lines.push(`Not yet matching (allow-listed): ${check.pending.join(', ')}`);
  if (check.ok) lines.unshift(check.pending.length ? 'Schema check passed: the migrated database matches the entities, outside the allow-listed tables.' : 'Schema check passed: the migrated database matches the entities.');
  return lines.join('\n');
}
