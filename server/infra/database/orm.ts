import { MikroORM, type EntitySchema, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from '../logger.ts';
import { migrationsList } from './migrations/index.ts';

/**
 * MikroORM keeps the schema: the entities, the migrations (their generator and
 * runner) and `schema:check`. The application's queries do not go through it
 * (database.ts): it is started to migrate, then closed.
 */
export type Orm = MikroORM;

export interface OrmOptions {
  url: string;
  /** Every entity of the schema (`server/domain/entities.ts`); passed in so infra does not import the domain. */
  entities: readonly EntitySchema[];
  poolMax: number;
  logger?: Logger;
  debug?: boolean;
}

export async function createOrm(opts: OrmOptions): Promise<Orm> {
  return MikroORM.init(ormConfig(opts));
}

/**
 * The configuration createOrm uses; the schema tools (scripts/schema-check.ts,
 * scripts/migration-create.ts) start from it so they see the schema exactly as
 * the application does.
 */
export function ormConfig(opts: OrmOptions): Options {
  return {
    clientUrl: opts.url,
    entities: [...opts.entities],
    extensions: [Migrator],
    migrations: {
      migrationsList,
      tableName: 'schema_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
    },
    pool: { min: 0, max: opts.poolMax },
    // Entities are defined with defineEntity, so no reflection is needed and
    // start-up does not scan the file system.
    discovery: { warnWhenNoEntities: true },
    debug: opts.debug ?? false,
    logger: (message: string) => opts.logger?.debug({ orm: message }, 'orm'),
    // Timestamps are `timestamptz` and always handled as UTC.
    forceUtcTimezone: true,
    ensureDatabase: false,
    // What the schema diff (scripts/schema-check.ts, migration:create) compares.
    // Triggers and functions live in the SQL migrations only (entities cannot
    // declare them), so the diff must neither drop nor recreate them; the
    // migrations' bookkeeping table is the migrator's, not an entity's.
    schemaGenerator: { ignoreTriggers: true, ignoreRoutines: true, skipTables: ['schema_migrations'] },
  };
}

/**
 * A step that must follow the SQL migrations but needs what SQL cannot hold
 * (the personal-data keys): it runs under the same lock, after them, and
 * commits its own work in batches on its own connections (a crash resumes
 * where it stopped).
 */
export type DataMigration = () => Promise<void>;

/**
 * Applies pending migrations, then the data migrations, under a PostgreSQL
 * advisory lock, so several processes starting against one database at once
 * apply each migration once and never re-encrypt the same rows side by side.
 */
export async function migrate(orm: Orm, dataMigrations: readonly DataMigration[] = []): Promise<string[]> {
  const em = orm.em.fork();
  return em.transactional(async (tx) => {
    // Transaction-scoped lock: released on commit or rollback, even if we crash.
    // Raw SQL: a function call on no table, which neither the EntityManager nor the builder models.
    await tx.execute('SELECT pg_advisory_xact_lock(814203911)');
    const applied = await orm.migrator.up();
    for (const step of dataMigrations) await step();
    return applied.map((m) => m.name);
  });
}
