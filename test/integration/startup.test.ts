import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/global-setup.ts';

const root = path.resolve(import.meta.dirname, '../..');
const node = process.execPath;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pc-startup-'));

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function start(env: Record<string, string>): { child: ChildProcessWithoutNullStreams; output: () => string; exited: Promise<number | null> } {
  // Environment of the test process minus anything that would point the
  // service at another database: this is the embedded default path.
  const { DATABASE_URL: _d, TEST_DATABASE_URL: _t, ...inherited } = process.env;
  const child = spawn(node, ['--import', './scripts/require-node24.mjs', 'server/main.ts'], {
    cwd: root,
    env: { ...inherited, LOG_LEVEL: 'info', ...env },
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitReady(url: string, output: () => string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`service did not become ready:\n${output()}`);
}

describe('npm start on the embedded default', () => {
  it('first start creates the database, writes the demo credentials to a private file (stdout is not a terminal), and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const env = { PORT: String(port), DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(await freePort()) };
    const first = start(env);
    await waitReady(`http://127.0.0.1:${port}`, first.output);
    const bannerFile = path.join(dataDir, 'first-run.txt');
    const until = Date.now() + 10_000;
    // The file is written first, then the log line pointing at it.
    while (!first.output().includes('first-run.txt') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const banner = readFileSync(bannerFile, 'utf8');
    expect(banner).toMatch(/Demo brand API key: sk_test_[A-Za-z0-9]+/);
    expect(banner).toMatch(/Admin token:\s+adm_/);
    // Readable by the owner only, from the moment it exists.
    expect(statSync(bannerFile).mode & 0o777).toBe(0o600);
    const key = /Demo brand API key: (sk_test_[A-Za-z0-9]+)/.exec(banner)![1]!;
    const liveKey = /Live API key:\s+(sk_live_[A-Za-z0-9]+)/.exec(banner)![1]!;
    const adminToken = /Admin token:\s+(adm_\S+)/.exec(banner)![1]!;
    const pairingCode = /Pairing code:\s+(\S+)/.exec(banner)![1]!;
    // stdout is the log stream here: none of the credentials are in it, one line says where they are.
    for (const secret of [key, liveKey, adminToken, pairingCode]) expect(first.output()).not.toContain(secret);
    expect(first.output()).not.toContain('Demo brand API key');
    const pointer = first.output().split('\n').filter((l) => l.includes('first-run.txt'));
    expect(pointer).toHaveLength(1);
    expect(JSON.parse(pointer[0]!).file).toBe(bannerFile);
    const brand = await fetch(`http://127.0.0.1:${port}/api/v1/brand`, { headers: { authorization: `Bearer ${key}` } });
    expect(brand.status).toBe(200);
    // Secrets are kept for the next start, readable by the owner only.
    expect(statSync(path.join(dataDir, 'secrets.json')).mode & 0o077).toBe(0);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('shutdown complete');

    // Second start: same data, no first-run banner, the key still works.
    const second = start(env);
    await waitReady(`http://127.0.0.1:${port}`, second.output);
    expect(second.output()).not.toContain('Demo brand API key');
    const again = await fetch(`http://127.0.0.1:${port}/api/v1/brand`, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  }, 120_000);

  it('a SIGTERM during start-up stops cleanly and leaves no database running', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-early-term-'));
    try {
      const run = start({ PORT: String(await freePort()), DATA_DIR: dir, EMBEDDED_DB_PORT: String(await freePort()) });
      // Wait until the embedded cluster exists (bootstrap is under way), then signal.
      const until = Date.now() + 30_000;
      while (!existsSync(path.join(dir, 'pg', 'postmaster.pid')) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(existsSync(path.join(dir, 'pg', 'postmaster.pid'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses a bad configuration with a message naming the variable', async () => {
    const run = start({ PORT: 'not-a-port', DATA_DIR: dataDir });
    expect(await run.exited).toBe(78);
    expect(run.output()).toMatch(/PORT: must be a port number/);
  });

  it('refuses an old Node with a clear message', async () => {
    const { spawnSync } = await import('node:child_process');
    const res = spawnSync(node, ['--import', './scripts/require-node24.mjs', '-e', ''], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: '' },
      encoding: 'utf8',
    });
    // This Node is new enough, so the guard lets it through; its message is checked against an older version below.
    expect(res.status).toBe(0);
    const guard = spawnSync(node, ['-e', "Object.defineProperty(process.versions, 'node', { value: '20.11.0' }); await import('./scripts/require-node24.mjs')", '--input-type=module'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(guard.status).toBe(1);
    expect(guard.stderr).toMatch(/needs Node\.js 24 or newer/);
  });
});
