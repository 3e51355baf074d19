import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/infra/database/embedded.ts';
import { createOrm, migrate } from '../../server/infra/database/orm.ts';
import { startBoss } from '../../server/infra/jobs/boss.ts';
import { createLogger } from '../../server/infra/logger.ts';
import { entities } from '../../server/domain/entities.ts';
import { freePort, withDatabase } from '../../server/infra/database/local-server.ts';
export { freePort };

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of a maintenance database on the test server (to CREATE/DROP DATABASE). */
    adminUrl: string;
    /** Name of the migrated template each test file clones its own database from. */
    templateDb: string;
    /** Prefix of every database this run creates, so teardown can drop them all. */
    dbPrefix: string;
  }
}



/**
 * One PostgreSQL for the whole run: the embedded one by default (a fresh
 * machine has no database), or TEST_DATABASE_URL. Migrations run once into a
 * template; every test file clones it into a database of its own.
 */
export default async function setup(project: TestProject) {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const dbPrefix = `pc_test_${runId}`;
  let embedded: EmbeddedPostgres | null = null;
  let tmpDir: string | null = null;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    tmpDir = mkdtempSync(path.join(os.tmpdir(), 'pc-test-pg-'));
    embedded = await startEmbeddedPostgres({
      dataDir: tmpDir,
      port: await freePort(),
      password: randomBytes(12).toString('hex'),
      database: 'postgres',
      // Durability is not under test here; speed is welcome.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    });
    adminUrl = embedded.url;
  }
  const templateDb = `${dbPrefix}_template`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${templateDb}"`);
  const templateUrl = withDatabase(adminUrl, templateDb);
  const logger = createLogger({ level: 'silent' });
  const orm = await createOrm({ url: templateUrl, entities, poolMax: 2 });
  await migrate(orm);
  await orm.close();
  // Install pg-boss's schema into the template too, so files do not each pay for it.
  const boss = await startBoss({ url: templateUrl, logger });
  await boss.stop({ graceful: false, close: true });

  project.provide('adminUrl', adminUrl);
  project.provide('templateDb', templateDb);
  project.provide('dbPrefix', dbPrefix);

  return async () => {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${dbPrefix}%`]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    await embedded?.stop();
    if (tmpDir) rmSync(tmpDir, { recursive: true, force: true });
  };
}
