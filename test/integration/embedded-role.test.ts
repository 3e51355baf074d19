import { CompiledQuery } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { bootstrap, type Runtime } from '../../server/bootstrap.ts';
import { loadConfig } from '../../server/config.ts';
import { startEmbeddedPostgres } from '../../server/infra/database/embedded.ts';
import { createOrm, migrate } from '../../server/infra/database/orm.ts';
import { startBoss } from '../../server/infra/jobs/boss.ts';
import { createLogger } from '../../server/infra/logger.ts';
import { loadSecrets } from '../../server/infra/secrets.ts';
import { createApiKey, createBrand } from '../../server/domain/brands/service.ts';
import { freePort } from '../support/global-setup.ts';
import { entities } from '../../server/domain/entities.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const logger = createLogger({ level: 'silent' });

async function embeddedConfig() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-role-'));
  dirs.push(dir);
  return loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, EMBEDDED_DB_PORT: String(await freePort()), WORKERS_ENABLED: 'false', LOG_LEVEL: 'silent' });
}

const one = async <T>(runtime: Runtime, text: string): Promise<T> => (await runtime.deps.db.executeQuery<T>(CompiledQuery.raw(text))).rows[0]!;

/** What the running service's own connections may do. */
async function expectLeastPrivilege(runtime: Runtime) {
  expect(await one(runtime, 'SELECT current_user AS name, rolsuper, rolcreatedb, rolcreaterole, rolbypassrls, rolreplication FROM pg_roles WHERE rolname = current_user')).toEqual({
    name: 'paycollect',
    rolsuper: false,
    rolcreatedb: false,
    rolcreaterole: false,
    rolbypassrls: false,
    rolreplication: false,
  });
  // It owns everything of the application but the audit log, so migrations and pg-boss keep working under it.
  expect(await one(runtime, "SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = current_database()")).toEqual({ owner: 'paycollect' });
  expect(
    await one(
      runtime,
      `SELECT count(*)::int AS n, string_agg(c.relname || ':' || c.relkind::text || ':' || pg_get_userbyid(c.relowner), ',' ORDER BY c.relname) AS debug FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'pgboss') AND pg_get_userbyid(c.relowner) <> 'paycollect'`,
    ),
  ).toEqual({
    n: 6,
    debug:
      'audit_log:r:paycollect_audit,audit_log_brand_idx:i:paycollect_audit,audit_log_created_idx:i:paycollect_audit,audit_log_id_seq:S:paycollect_audit,audit_log_pkey:i:paycollect_audit,audit_log_target_idx:i:paycollect_audit',
  });
  expect(
    await one(
      runtime,
      `SELECT string_agg(p.proname || ':' || pg_get_userbyid(p.proowner), ',') AS other FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname IN ('public', 'pgboss') AND pg_get_userbyid(p.proowner) <> 'paycollect'`,
    ),
  ).toEqual({ other: 'audit_log_append_only:paycollect_audit' });
  // A superuser could read server files; this role cannot.
  await expect(runtime.deps.db.executeQuery(CompiledQuery.raw("SELECT pg_read_file('postmaster.pid')"))).rejects.toThrow(/permission denied/);
  // Writing through the application and the job queue works.
  const em = runtime.deps.db;
  const brand = await createBrand(em, { name: 'Role check' });
  await createApiKey(em, brand.id, { name: 'k' });
  await runtime.deps.boss.createQueue('role-check');
  expect(await runtime.deps.boss.send('role-check', { ok: true })).toMatch(/^[0-9a-f-]{36}$/);
}

describe('the embedded default connects as a least-privilege owner role', () => {
  it('on a fresh data directory', async () => {
    const config = await embeddedConfig();
    const runtime = await bootstrap(config, logger);
    try {
      await expectLeastPrivilege(runtime);
      // Its password is generated and kept with the other secrets.
      expect(loadSecrets(config).secrets.embeddedDbAppPassword).toMatch(/^[A-Za-z0-9_-]{32}$/);
    } finally {
      await runtime.close();
    }
  }, 120_000);

  it('on a data directory of an older version, whose objects the superuser owns', async () => {
    const config = await embeddedConfig();
    // What older versions did: connect as the superuser, migrate, install pg-boss, store data.
    const { secrets } = loadSecrets(config);
    const old = await startEmbeddedPostgres({ dataDir: config.DATA_DIR, port: config.EMBEDDED_DB_PORT, password: secrets.embeddedDbPassword, database: 'paycollect' });
    const orm = await createOrm({ url: old.url, entities, poolMax: 2 });
    await migrate(orm);
    await orm.close();
    const boss = await startBoss({ url: old.url, logger });
    await boss.createQueue('old-queue');
    await boss.send('old-queue', { n: 1 });
    await boss.stop({ graceful: false, close: true });
    const c = new pg.Client({ connectionString: old.url });
    await c.connect();
    await c.query("INSERT INTO settings (key, value) VALUES ('old_setting', '42')");
    expect((await c.query("SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relname = 'settings'")).rows[0].owner).toBe('postgres');
    await c.end();
    await old.stop();

    const runtime = await bootstrap(config, logger);
    try {
      await expectLeastPrivilege(runtime);
      expect(await one(runtime, "SELECT value FROM settings WHERE key = 'old_setting'")).toEqual({ value: 42 });
      await runtime.deps.db.executeQuery(CompiledQuery.raw("UPDATE settings SET value = '43' WHERE key = 'old_setting'"));
      expect(await runtime.deps.boss.send('old-queue', { n: 2 })).toMatch(/^[0-9a-f-]{36}$/);
      expect((await runtime.deps.boss.fetch('old-queue', { batchSize: 5 })).length).toBe(2);
    } finally {
      await runtime.close();
    }
    // A second start (nothing left to hand over) works the same.
    const again = await bootstrap(config, logger);
    try {
      expect(await one(again, "SELECT value FROM settings WHERE key = 'old_setting'")).toEqual({ value: 43 });
    } finally {
      await again.close();
    }
  }, 180_000);
});
