import { CompiledQuery } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createApp } from '../../server/app.ts';
import { bootstrap, type Runtime } from '../../server/bootstrap.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/infra/logger.ts';
import { freePort } from '../support/global-setup.ts';
import { compileCacheEnv } from '../support/harness.ts';
import { withDatabase } from '../../server/infra/database/local-server.ts';
import { serviceCanEmptyAuditLog } from '../../server/infra/database/audit-owner.ts';

/**
 * The audit log cannot be emptied or rewritten by the application's own
 * database role (what a SQL injection or a leaked connection string gets): on
 * the embedded default it belongs to `paycollect_audit`, the service's role
 * `paycollect` may only INSERT and SELECT, and the service's own audit writes
 * and reads still work.
 */

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const logger = createLogger({ level: 'silent' });

const asAppRole = async (runtime: Runtime, text: string) => (await runtime.deps.db.executeQuery(CompiledQuery.raw(text))).rows;

const REFUSED: ReadonlyArray<[string, RegExp]> = [
  ['TRUNCATE audit_log', /permission denied/],
  ['DELETE FROM audit_log', /permission denied/],
  ["UPDATE audit_log SET action = 'forged'", /permission denied/],
  ['ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only', /must be owner/],
  ['ALTER TABLE audit_log DISABLE TRIGGER ALL', /must be owner/],
  ['ALTER TABLE audit_log OWNER TO paycollect', /must be owner/],
  ['CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$', /must be owner/],
  ['CREATE TRIGGER sneak BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()', /permission denied|must be owner/],
  // The application's role owns the schema, which would let it drop what is in it: the event trigger refuses.
  ['DROP TABLE audit_log', /audit log cannot be dropped/],
  ['DROP FUNCTION audit_log_append_only() CASCADE', /audit log cannot be dropped/],
  ['DROP EVENT TRIGGER audit_log_guard', /must be owner/],
  ['DROP SCHEMA audit_guard CASCADE', /must be owner/],
  ['CREATE OR REPLACE FUNCTION audit_guard.refuse_audit_log_drop() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END $$', /permission denied|must be owner/],
];

async function expectSealed(runtime: Runtime) {
  expect((await asAppRole(runtime, 'SELECT current_user AS name'))[0]).toEqual({ name: 'paycollect' });
  const [before] = await asAppRole(runtime, 'SELECT count(*)::int AS n FROM audit_log');
  for (const [sql, error] of REFUSED) await expect(asAppRole(runtime, sql), sql).rejects.toThrow(error);
  expect((await asAppRole(runtime, 'SELECT count(*)::int AS n FROM audit_log'))[0]).toEqual(before);
  expect((await asAppRole(runtime, "SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE oid = 'audit_log'::regclass"))[0]).toEqual({ owner: 'paycollect_audit' });
}

/** The service's own audit trail over HTTP: a change writes a row (INSERT), the audit-log route reads it (SELECT). */
async function expectServiceAudits(runtime: Runtime, name: string) {
  const server = createApp(runtime.deps).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/admin/v1`;
    const headers = { authorization: `Bearer ${runtime.deps.secrets.adminToken}`, 'content-type': 'application/json' };
    const created = await fetch(`${base}/brands`, { method: 'POST', headers, body: JSON.stringify({ name }) });
    expect(created.status).toBe(201);
    const brandId = (await created.json()).data.id;
    const log = await fetch(`${base}/audit-log?action=brand.create`, { headers });
    expect(log.status).toBe(200);
    expect((await log.json()).data.map((r: { target_id: string }) => r.target_id)).toContain(String(brandId));
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

describe('the audit log on the embedded default', () => {
  it("is not the application role's: INSERT and SELECT only; TRUNCATE, DELETE, UPDATE, disabling its trigger and dropping it fail", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-audit-owner-'));
    dirs.push(dir);
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, EMBEDDED_DB_PORT: String(await freePort()), WORKERS_ENABLED: 'false', LOG_LEVEL: 'silent' });
    const runtime = await bootstrap(config, logger);
    try {
      await expectServiceAudits(runtime, 'Audited shop');
      await expectSealed(runtime);
    } finally {
      await runtime.close();
    }
    // A second start re-asserts it without changing anything.
    const again = await bootstrap(config, logger);
    try {
      await expectSealed(again);
      await expectServiceAudits(again, 'Audited shop 2');
    } finally {
      await again.close();
    }
  }, 180_000);
});

describe('the audit log with DATABASE_URL', () => {
  it('`npm run db:seal-audit-log` (a superuser connection) leaves the service role INSERT and SELECT only; until then the check a start warns on is true', async () => {
    const admin = new pg.Client({ connectionString: inject('adminUrl') });
    await admin.connect();
    const suffix = randomBytes(4).toString('hex');
    const role = `pc_app_${suffix}`;
    const database = `pc_seal_${suffix}`;
    const password = randomBytes(12).toString('hex');
    await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE ${database} OWNER ${role}`);
    const adminDbUrl = withDatabase(inject('adminUrl'), database);
    const appUrl = new URL(adminDbUrl);
    appUrl.username = role;
    appUrl.password = password;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-audit-url-'));
    dirs.push(dir);
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, DATABASE_URL: appUrl.toString(), WORKERS_ENABLED: 'false', LOG_LEVEL: 'silent' });
    const runtime = await bootstrap(config, logger);
    try {
      // The owner role ran the migrations and owns the table: what main.ts warns about.
      expect(await serviceCanEmptyAuditLog(runtime.deps.db)).toBe(true);
      const run = await promisify(execFile)(process.execPath, ['--import', './scripts/require-node24.mjs', 'scripts/seal-audit-log.ts'], {
        env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), DATABASE_URL: appUrl.toString(), DATABASE_ADMIN_URL: adminDbUrl },
      });
      expect(run.stdout).toContain(`audit_log now belongs to ${role}_audit`);
      expect(await serviceCanEmptyAuditLog(runtime.deps.db)).toBe(false);
      for (const [sql, error] of REFUSED.filter(([q]) => !q.includes('OWNER TO'))) await expect(asAppRole(runtime, sql), sql).rejects.toThrow(error);
      await expectServiceAudits(runtime, 'URL shop');
    } finally {
      await runtime.close();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${role}_audit`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  }, 180_000);
});
