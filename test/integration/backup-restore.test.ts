import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.ts';
import { bootstrap, type Runtime } from '../../server/bootstrap.ts';
import { loadConfig } from '../../server/config.ts';
import { signingSecrets } from '../../server/domain/webhooks/endpoints.ts';
import { restoreEmbedded } from '../../server/infra/backup/embedded-backup.ts';
import { migrationsList } from '../../server/infra/database/migrations/index.ts';
import { createLogger } from '../../server/infra/logger.ts';
import { run } from '../../scripts/cli.ts';
import { freePort } from '../support/global-setup.ts';
import { testRateLimits } from '../support/harness.ts';
import { seedCompletedTransaction, seedGateway } from '../support/seed.ts';

/**
 * The embedded default's backup and restore, end to end: a service with data
 * made through its APIs is backed up while it runs, the backup is restored into
 * a fresh data directory, and a service started there serves the same
 * payments with the same keys. Then what a restore must refuse.
 */

const logger = createLogger({ level: 'silent' });
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Service {
  runtime: Runtime;
  request(method: string, p: string, opts?: { token?: string; body?: unknown }): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

async function startService(dataDir: string): Promise<Service> {
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(await freePort()), WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'silent', PORT: '0', ...testRateLimits });
  const runtime = await bootstrap(config, logger);
  const server: Server = await new Promise((resolve) => {
    const srv = createApp(runtime.deps).listen(0, '127.0.0.1', () => resolve(srv));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    runtime,
    async request(method, p, opts = {}) {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(baseUrl + p, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await runtime.close();
    },
  };
}

async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(args, { out: (s) => out.push(s), err: (s) => err.push(s) }, { PATH: process.env.PATH, ...env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const PASSPHRASE = 'correct horse battery staple';
const env = { PAYCOLLECT_BACKUP_PASSPHRASE: PASSPHRASE };

let archive: string;
const before: {
  apiKey: string;
  testKey: string;
  adminToken: string;
  paymentIds: string[];
  payments: unknown[];
  customer: unknown;
  list: unknown;
  webhookSecret: string;
  endpointId: number;
  afterBackupPaymentId: string;
  sourceDir: string;
} = {} as never;

beforeAll(async () => {
  const dataDir = tempDir('pc-backup-src-');
  before.sourceDir = dataDir;
  const svc = await startService(dataDir);
  try {
    const admin = svc.runtime.deps.secrets.adminToken;
    before.adminToken = admin;
    const brand = await svc.request('POST', '/api/admin/v1/brands', { token: admin, body: { name: 'Backed Up Shop' } });
    expect(brand.status, JSON.stringify(brand.body)).toBe(201);
    const brandId = brand.body.data.id as number;
    const live = await svc.request('POST', `/api/admin/v1/brands/${brandId}/api-keys`, { token: admin, body: { name: 'shop', mode: 'live' } });
    const test = await svc.request('POST', `/api/admin/v1/brands/${brandId}/api-keys`, { token: admin, body: { name: 'sandbox', mode: 'test' } });
    expect([live.status, test.status]).toEqual([201, 201]);
    before.apiKey = live.body.data.key;
    before.testKey = test.body.data.key;
    const gateway = await seedGateway(svc, 'bkash');
    const ids: string[] = [];
    for (const [i, customer] of [
      { name: 'Rahim Uddin', email: 'rahim@example.com', phone: '01712345678' },
      { name: 'Karima Begum', email: 'karima@example.com', phone: '01812345678' },
    ].entries()) {
      const { paymentId } = await seedCompletedTransaction(svc, { apiKey: before.apiKey, gateway, amount: `${1000 + i}.50`, customer });
      ids.push(paymentId);
    }
    before.paymentIds = ids;
    before.payments = await Promise.all(ids.map(async (id) => (await svc.request('GET', `/api/v1/payments/${id}`, { token: before.apiKey })).body));
    before.customer = (await svc.request('GET', '/api/v1/customers/rahim@example.com', { token: before.apiKey })).body;
    before.list = (await svc.request('GET', '/api/v1/payments', { token: before.apiKey })).body;
    const endpoint = await svc.request('POST', '/api/v1/webhooks/endpoints', { token: before.apiKey, body: { url: 'http://127.0.0.1:9/paycollect', events: ['payment.completed'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    before.webhookSecret = endpoint.body.data.secret;
    before.endpointId = endpoint.body.data.id;

    // Backed up while the service runs, through the CLI.
    archive = path.join(tempDir('pc-backup-out-'), 'paycollect.backup');
    const backup = await cli(['backup', '--out', archive, '--data-dir', dataDir], env);
    expect(backup, backup.err).toMatchObject({ code: 0 });
    expect(backup.out).toContain(`migration level ${migrationsList.at(-1)!.name}`);
    expect(statSync(archive).mode & 0o777).toBe(0o600);

    // Written after the backup: not in it.
    const later = await svc.request('POST', '/api/v1/payments', { token: before.apiKey, body: { amount: '77.00', currency: 'BDT' } });
    expect(later.status).toBe(201);
    before.afterBackupPaymentId = later.body.data.payment_id;
  } finally {
    await svc.close();
  }
}, 240_000);

describe('a restored backup serves the same payments', () => {
  it('in a fresh data directory: payments, customers (decrypted), API keys, admin token and webhook secrets are as they were', async () => {
    const dataDir = tempDir('pc-backup-dst-');
    const restored = await cli(['restore', '--in', archive, '--data-dir', dataDir], env);
    expect(restored, restored.err).toMatchObject({ code: 0 });
    expect(restored.out).toContain(`migration level ${migrationsList.at(-1)!.name}`);
    expect(statSync(path.join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
    // Nothing of the unpacking is left behind.
    expect(readdirSync(dataDir).sort()).toEqual(['pg', 'secrets.json']);

    const svc = await startService(dataDir);
    try {
      // No migration was pending: the restored schema is the code's.
      expect(svc.runtime.migrations).toEqual([]);
      for (const [i, id] of before.paymentIds.entries()) {
        const res = await svc.request('GET', `/api/v1/payments/${id}`, { token: before.apiKey });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(before.payments[i]);
      }
      expect((before.payments[0] as { data: { status: string } }).data.status).toBe('completed');
      expect((await svc.request('GET', '/api/v1/payments', { token: before.apiKey })).body).toEqual(before.list);
      // Personal data decrypts (the keys came back with it) and its blind index finds it.
      const customer = await svc.request('GET', '/api/v1/customers/rahim@example.com', { token: before.apiKey });
      expect(customer.body).toEqual(before.customer);
      expect(customer.body.data).toMatchObject({ name: 'Rahim Uddin', phone: '+8801712345678' });
      // The payment created after the backup is not there.
      expect((await svc.request('GET', `/api/v1/payments/${before.afterBackupPaymentId}`, { token: before.apiKey })).status).toBe(404);
      // The test-mode key authenticates too, and the admin token is the same.
      expect((await svc.request('GET', '/api/v1/payments', { token: before.testKey })).status).toBe(200);
      expect((await svc.request('GET', '/api/admin/v1/brands', { token: before.adminToken })).status).toBe(200);
      // Webhooks are signed with the secret the merchant was given.
      const [row] = (await svc.runtime.deps.db.selectFrom('webhook_endpoints').select(['brand_id', 'secret_encrypted', 'previous_secrets']).where('id', '=', before.endpointId).execute()) as [
        Parameters<typeof signingSecrets>[1],
      ];
      expect(signingSecrets(svc.runtime.deps.crypto.pii, row)).toEqual([before.webhookSecret]);
      // The service writes on the restored database (sequences came back: no id collides).
      const fresh = await svc.request('POST', '/api/v1/payments', { token: before.apiKey, body: { amount: '12.00', currency: 'BDT' } });
      expect(fresh.status, JSON.stringify(fresh.body)).toBe(201);
    } finally {
      await svc.close();
    }
  }, 240_000);
});

describe('a restore refuses', () => {
  const untouched = (dir: string) => expect(readdirSync(dir)).toEqual([]);

  it('a wrong passphrase', async () => {
    const dataDir = tempDir('pc-backup-bad-');
    const res = await cli(['restore', '--in', archive, '--data-dir', dataDir], { PAYCOLLECT_BACKUP_PASSPHRASE: 'not the passphrase at all' });
    expect(res).toMatchObject({ code: 1 });
    expect(res.err).toMatch(/wrong passphrase/);
    untouched(dataDir);
  }, 60_000);

  it('an archive with one byte changed', async () => {
    const dataDir = tempDir('pc-backup-bad-');
    const bytes = readFileSync(archive);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    const tampered = path.join(tempDir('pc-backup-t-'), 'tampered.backup');
    writeFileSync(tampered, bytes);
    const res = await cli(['restore', '--in', tampered, '--data-dir', dataDir], env);
    expect(res).toMatchObject({ code: 1 });
    expect(res.err).toMatch(/damaged or was altered/);
    untouched(dataDir);
  }, 60_000);

  it('an archive cut short', async () => {
    const dataDir = tempDir('pc-backup-bad-');
    const cut = path.join(tempDir('pc-backup-t-'), 'cut.backup');
    writeFileSync(cut, readFileSync(archive).subarray(0, statSync(archive).size - 100));
    const res = await cli(['restore', '--in', cut, '--data-dir', dataDir], env);
    expect(res).toMatchObject({ code: 1 });
    expect(res.err).toMatch(/damaged|cut off/);
    untouched(dataDir);
  }, 60_000);

  it('a backup from a newer version (a migration this code does not know)', async () => {
    const dataDir = tempDir('pc-backup-bad-');
    const older = migrationsList.slice(0, -1).map((m) => m.name);
    await expect(restoreEmbedded({ dataDir, input: archive, passphrase: PASSPHRASE, knownMigrations: older })).rejects.toThrow(
      new RegExp(`migration level \\(${migrationsList.at(-1)!.name}\\) is newer than this code's \\(${older.at(-1)}\\)`),
    );
    untouched(dataDir);
  }, 60_000);

  it('a data directory that holds an installation, unless --force, which keeps the old one aside (from a backup of the stopped service)', async () => {
    const dataDir = tempDir('pc-backup-busy-');
    writeFileSync(path.join(dataDir, 'secrets.json'), '{"adminToken":"adm_other"}\n', { mode: 0o600 });
    const refused = await cli(['restore', '--in', archive, '--data-dir', dataDir], env);
    expect(refused).toMatchObject({ code: 1 });
    expect(refused.err).toMatch(/already holds an installation/);
    expect(readdirSync(dataDir)).toEqual(['secrets.json']);

    // This archive is of the stopped service: its cluster is started for the backup and stopped again.
    const stoppedArchive = path.join(tempDir('pc-backup-out-'), 'stopped.backup');
    const backup = await cli(['backup', '--out', stoppedArchive, '--data-dir', before.sourceDir], env);
    expect(backup, backup.err).toMatchObject({ code: 0 });
    expect(existsSync(path.join(before.sourceDir, 'pg', 'postmaster.pid'))).toBe(false);
    const forced = await cli(['restore', '--in', stoppedArchive, '--data-dir', dataDir, '--force'], env);
    expect(forced, forced.err).toMatchObject({ code: 0 });
    expect(forced.out).toContain('every table holds the rows the manifest counted');
    const kept = readdirSync(dataDir).find((f) => f.startsWith('secrets.json.replaced-'))!;
    expect(readFileSync(path.join(dataDir, kept), 'utf8')).toContain('adm_other');
    expect(JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')).adminToken).toBe(before.adminToken);
  }, 120_000);

  it('a DATABASE_URL installation (its database is backed up with pg_dump), a missing passphrase, an archive that exists', async () => {
    const res = await cli(['backup', '--out', path.join(tempDir('pc-backup-x-'), 'x'), '--data-dir', tempDir('pc-backup-x-')], { DATABASE_URL: 'postgres://example/db', ...env });
    expect(res).toMatchObject({ code: 1 });
    expect(res.err).toMatch(/pg_dump/);
    const none = await cli(['restore', '--in', archive, '--data-dir', tempDir('pc-backup-x-')]);
    expect(none).toMatchObject({ code: 1 });
    expect(none.err).toMatch(/no passphrase/);
    // An existing archive is never overwritten.
    const again = await cli(['backup', '--out', archive, '--data-dir', before.sourceDir], env);
    expect(again).toMatchObject({ code: 1 });
    expect(again.err).toMatch(/exists: give another file name/);
  });
});
