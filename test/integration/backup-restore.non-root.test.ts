import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAsIds } from '../../server/infra/database/embedded.ts';
import { freePort } from '../support/global-setup.ts';

/**
 * The backup and restore commands as a user takes them: `npm start` and the
 * CLI as one ordinary (non-root) user, the backup taken while the service
 * runs, the restore into a new DATA_DIR, the service started on it. Run as
 * root (CI), the steps run as the `postgres` user; as anyone else, as that user.
 */

const root = path.resolve(import.meta.dirname, '../..');
const ids = runAsIds();
const base = mkdtempSync(path.join(os.tmpdir(), 'pc-backup-user-'));
if (ids) chownSync(base, ids.uid, ids.gid);
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

const PASSPHRASE = 'a long enough passphrase';

function asUser(args: string[], env: Record<string, string>): ChildProcess {
  const { DATABASE_URL: _d, TEST_DATABASE_URL: _t, NODE_COMPILE_CACHE: _c, ...inherited } = process.env;
  const argv = [process.execPath, '--import', './scripts/require-node24.mjs', ...args];
  const child = ids ? spawn('runuser', ['-u', 'postgres', '--', ...argv], { cwd: root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }) : spawn(argv[0]!, argv.slice(1), { cwd: root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return child;
}

async function cli(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = asUser(['scripts/cli.ts', ...args], { PAYCOLLECT_BACKUP_PASSPHRASE: PASSPHRASE });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, output };
}

async function startService(dataDir: string): Promise<{ baseUrl: string; migrationsApplied: number; stop(): Promise<void> }> {
  const child = asUser(['server/main.ts'], { DATA_DIR: dataDir, PORT: '0', EMBEDDED_DB_PORT: String(await freePort()), LOG_LEVEL: 'info' });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const started = await new Promise<{ port: number; migrations_applied: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), 90_000);
    const check = () => {
      const line = output.split('\n').find((l) => l.includes('"service started"'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', () => reject(new Error(`the service exited:\n${output}`)));
  });
  return {
    baseUrl: `http://127.0.0.1:${started.port}`,
    migrationsApplied: started.migrations_applied,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const adminToken = (dataDir: string) => (JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { adminToken: string }).adminToken;

describe('backup and restore as an ordinary user', () => {
  it('backs up the running service and restores into a new DATA_DIR that serves the same data', async () => {
    const source = path.join(base, 'data');
    const svc = await startService(source);
    let brandId: number;
    try {
      const token = adminToken(source);
      const res = await fetch(`${svc.baseUrl}/api/admin/v1/brands`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Non-root shop' }) });
      expect(res.status).toBe(201);
      brandId = ((await res.json()) as { data: { id: number } }).data.id;
      const backup = await cli(['backup', '--out', path.join(base, 'paycollect.backup'), '--data-dir', source]);
      expect(backup.code, backup.output).toBe(0);
      // A restore over the running service's DATA_DIR is refused, even with --force.
      const over = await cli(['restore', '--in', path.join(base, 'paycollect.backup'), '--data-dir', source, '--force']);
      expect(over.code).toBe(1);
      expect(over.output).toMatch(/is running .*stop the service first/);
      // The service kept serving through the backup.
      expect((await fetch(`${svc.baseUrl}/api/admin/v1/brands/${brandId}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      await svc.stop();
    }
    expect(statSync(path.join(base, 'paycollect.backup')).uid).toBe(ids?.uid ?? process.getuid!());

    const target = path.join(base, 'restored');
    const restore = await cli(['restore', '--in', path.join(base, 'paycollect.backup'), '--data-dir', target]);
    expect(restore.code, restore.output).toBe(0);
    const again = await startService(target);
    try {
      expect(again.migrationsApplied).toBe(0);
      const res = await fetch(`${again.baseUrl}/api/admin/v1/brands/${brandId}`, { headers: { authorization: `Bearer ${adminToken(target)}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: { name: string } }).data.name).toBe('Non-root shop');
      expect(adminToken(target)).toBe(adminToken(source));
    } finally {
      await again.stop();
    }
  }, 240_000);
});
