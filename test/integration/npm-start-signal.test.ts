import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/global-setup.ts';
import { startScriptNodeOptions } from '../../bench/lib/servers.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pc-npm-start-'));
const started: number[] = [];
afterAll(() => {
  // Never leave a server or database behind if an assertion failed half-way.
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const pidIn = (file: string) => Number(readFileSync(file, 'utf8').split('\n')[0]);

async function until(what: string, ok: () => boolean, ms: number, output: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('npm start under a process manager', () => {
  async function startNpm(opts: { ownGroup: boolean }) {
    const { DATABASE_URL: _d, TEST_DATABASE_URL: _t, ...inherited } = process.env;
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { ...inherited, PORT: '0', DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(await freePort()), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Like a terminal's foreground job: npm leads a process group of its own.
      detached: opts.ownGroup,
    });
    started.push(npm.pid!);
    let out = '';
    npm.stdout.on('data', (c) => (out += c));
    npm.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    await until('the service to start', () => out.includes('"service started"'), 90_000, () => out);
    const nodePid = pidIn(path.join(dataDir, 'pg-owner.pid'));
    const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
    const postmasterPid = pidIn(pidFile);
    started.push(nodePid, postmasterPid);
    expect(nodePid).not.toBe(npm.pid);
    expect(alive(nodePid) && alive(postmasterPid)).toBe(true);
    return { npm, exited, nodePid, postmasterPid, pidFile, output: () => out };
  }

  it('SIGTERM to the npm process stops the node server and the embedded PostgreSQL, leaving no postmaster behind', async () => {
    const run = await startNpm({ ownGroup: false });
    // What systemd (KillMode=mixed/process) or a container runtime does: signal the process it started.
    run.npm.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    await until('node and postgres to exit', () => !alive(run.nodePid) && !alive(run.postmasterPid), 30_000, run.output);
    expect(existsSync(run.pidFile)).toBe(false);
    expect(run.output()).toContain('shutdown complete');
  }, 150_000);

  it('SIGINT to the whole process group (Ctrl-C in a terminal) stops everything the same way', async () => {
    // The postmaster has a group of its own: were it in ours, it would shut down at
    // once, under the server still draining, and the server would exit 1.
    const run = await startNpm({ ownGroup: true });
    process.kill(-run.npm.pid!, 'SIGINT');
    expect(await run.exited).toBe(0);
    await until('node and postgres to exit', () => !alive(run.nodePid) && !alive(run.postmasterPid), 30_000, run.output);
    expect(existsSync(run.pidFile)).toBe(false);
    expect(run.output()).toContain('shutdown complete');
  }, 150_000);

  it('the start script execs Node with the V8 flags the benchmarks reuse', () => {
    expect(startScriptNodeOptions()).toEqual(['--max-semi-space-size=16', '--heap-growing-percent=50']);
  });
});
