import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, newFingerprint } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

// The CLI talks to this file's server over HTTP (admin API), so it runs asynchronously:
// a synchronous spawn would block the very server it calls.
function cli(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', './scripts/require-node24.mjs', 'scripts/cli.ts', ...args], {
      env: { ...process.env, PAYCOLLECT_BASE_URL: t.baseUrl, DATA_DIR: t.config.DATA_DIR },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('npm run cli -- pairing-code:create', () => {
  it('prints a code once that pairs a device of that brand', async () => {
    const { brandId } = await t.createBrand('CLI Brand');
    const res = await cli('pairing-code:create', '--brand', String(brandId), '--ttl-minutes', '30');
    expect(res.status, res.stderr).toBe(0);
    const code = /Pairing code: ([0-9A-Z]{5}-[0-9A-Z]{5})/.exec(res.stdout)?.[1];
    expect(code).toBeDefined();
    expect(res.stdout).toContain(`Brand:        ${brandId}`);
    const expires = Date.parse(/Expires at:\s+(\S+)/.exec(res.stdout)![1]!);
    expect(expires - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(expires - Date.now()).toBeLessThan(31 * 60_000);

    const paired = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: code, body: { fingerprint: newFingerprint(), device_name: 'CLI phone' } });
    expect(paired.status).toBe(201);
    const [row] = await t.sql<any>('SELECT brand_id FROM devices WHERE uuid = $1', [paired.body.data.device_id]);
    expect(row.brand_id).toBe(String(brandId));
  });

  it('fails clearly: unknown brand (1), missing or bad options and unknown commands (64)', async () => {
    const unknown = await cli('pairing-code:create', '--brand', '999999');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('BRAND_NOT_FOUND');
    expect(unknown.stdout).toBe('');
    const missing = await cli('pairing-code:create');
    expect(missing.status).toBe(64);
    expect(missing.stderr).toContain('--brand must be a positive whole number');
    expect((await cli('pairing-code:create', '--brand', '1', '--bogus')).status).toBe(64);
    expect((await cli('pairing-code:create', '--brand', '1', '--ttl-minutes', '0')).status).toBe(64);
    const nope = await cli('nope');
    expect(nope.status).toBe(64);
    expect(nope.stderr).toContain('pairing-code:create');
    expect((await cli('--help')).status).toBe(0);
  });
});
