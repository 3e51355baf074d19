import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../server/infra/database/embedded.ts';
import { freePort } from '../support/global-setup.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function query(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ x: number }>('SELECT 1 AS x')).rows[0]!.x;
  } finally {
    await c.end();
  }
}

describe('embedded PostgreSQL sharing and recovery', () => {
  it('shares a cluster a live process owns, and replaces one whose owner was killed', async () => {
    const ownerPort = await freePort();
    const owner = spawn(process.execPath, ['test/support/embedded-owner.ts', dir, String(ownerPort)], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      owner.stdout.on('data', (d) => String(d).includes('READY') && resolve());
      owner.on('exit', (code) => reject(new Error(`owner exited ${code}`)));
    });

    // A second process (the CLI, `npm run migrate`) joins the running cluster...
    const shared = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), password: 'owner-pw', database: 'owned' });
    expect(new URL(shared.url).port).toBe(String(ownerPort));
    // ...and leaving does not stop it under its owner.
    await shared.stop();
    expect(await query(shared.url)).toBe(1);

    // The owner dies without cleaning up: its postmaster is an orphan that the
    // next start stops and replaces with its own.
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));
    const newPort = await freePort();
    const next = await startEmbeddedPostgres({ dataDir: dir, port: newPort, password: 'owner-pw', database: 'owned' });
    expect(new URL(next.url).port).toBe(String(newPort));
    expect(await query(next.url)).toBe(1);
    await next.stop();
    await expect(query(next.url)).rejects.toThrow();
  }, 90_000);
});
