import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createOrm, type Orm } from '../../server/infra/database/orm.ts';
import { entities } from '../../server/domain/entities.ts';

export interface MigrationDatabase {
  orm: Orm;
  /** Plain SQL on the database, for rows written the way an older service wrote them. */
  db: pg.Client;
  /** The first row of a query. */
  one<T = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<T>;
  /** Applies the migrations up to and including `to` (a migration name). */
  migrateTo(to: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A database of its own migrated only up to `to`, for a test of a later
 * migration on data that already exists. Not cloned from the run's template:
 * the template is migrated all the way.
 */
export async function databaseMigratedTo(to: string): Promise<MigrationDatabase> {
  const name = `${inject('dbPrefix')}_mig_${randomBytes(4).toString('hex')}`;
  const adminUrl = inject('adminUrl');
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const orm = await createOrm({ url: u.toString(), entities, poolMax: 2 });
  await orm.migrator.up({ to });
  const db = new pg.Client({ connectionString: u.toString() });
  await db.connect();
  return {
    orm,
    db,
    async one<T>(sql: string, values: unknown[] = []) {
      return (await db.query(sql, values)).rows[0] as T;
    },
    async migrateTo(target: string) {
      await orm.migrator.up({ to: target });
    },
    async close() {
      await db.end();
      await orm.close(true);
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
