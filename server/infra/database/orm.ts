import { MikroORM, type EntityManager, type EntitySchema, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from '../logger.ts';
import { migrationsList } from './migrations/index.ts';
import { reclaimDeadClients } from './pool-guard.ts';
import { useNamedStatements } from './named-statements.ts';
import { pipelineTransactions } from './client-pipeline.ts';
import type { Pool } from 'pg';

export type { EntityManager };
export type Orm = MikroORM;

/** Longest wait for a pooled connection before the request fails with 503. */
export const POOL_ACQUIRE_TIMEOUT_MS = 5000;

export interface OrmOptions {
  url: string;
  /** Every entity of the schema (`server/domain/entities.ts`); passed in so infra does not import the domain. */
  entities: readonly EntitySchema[];
  poolMax: number;
  /** Connections the pool keeps open while idle. */
  poolMin?: number;
  /** How long a connection above poolMin stays open unused (pg-pool's default, 10 s, when unset). */
  poolIdleTimeoutMs?: number;
  /** The statements compiled once go to PostgreSQL as named (prepared) statements (named-statements.ts); default on. */
  namedStatements?: boolean;
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
    pool: { min: opts.poolMin ?? 0, max: opts.poolMax, ...(opts.poolIdleTimeoutMs ? { idleTimeoutMillis: opts.poolIdleTimeoutMs } : {}) },
    // Fail fast instead of queueing without end: a request waits at most this long
    // for a pooled connection (all busy, or the database not answering) and then
    // gets a 503. TCP keepalive lets the driver notice a database host that vanished.
    // reclaimDeadClients: slots of connections lost mid-transaction come back (see pool-guard.ts).
    // useNamedStatements: hot statements are parsed and planned once per connection (see named-statements.ts).
    // pipelineTransactions: a transaction's BEGIN goes out with its first statement, and statements handed over for
    // its COMMIT with the COMMIT (see client-pipeline.ts).
    // pipeline: a client sends each query as soon as it is given one, without waiting for the answer to the one
    // before (pg's pipeline mode). Kysely still gives a connection one query at a time, so nothing changes but
    // where the domain asks for several at once (db.ts `pipelined`): those go in one round trip.
    driverOptions: { connectionTimeoutMillis: POOL_ACQUIRE_TIMEOUT_MS, keepAlive: true, pipeline: true, onPoolCreated: (pool: Pool) => {
      reclaimDeadClients(pool);
      if (opts.namedStatements !== false) useNamedStatements(pool);
      // After the named statements: it wraps their client.query (client-pipeline.ts).
      pipelineTransactions(pool);
    } },
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
 * commits its own work in batches (a crash resumes where it stopped).
 */
export type DataMigration = (orm: Orm) => Promise<void>;

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
    for (const step of dataMigrations) await step(orm);
    return applied.map((m) => m.name);
  });
}
