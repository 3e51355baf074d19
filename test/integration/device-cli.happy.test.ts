import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, newFingerprint } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

function cli(...args: string[]) {
  const res = spawnSync(process.execPath, ['--import', './scripts/require-node24.mjs', 'scripts/cli.ts', ...args], {
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: t.config.DATABASE_URL!, DATA_DIR: t.config.DATA_DIR, LOG_LEVEL: 'warn', WORKERS_ENABLED: 'false' },
    timeout: 60_000,
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

describe('npm run cli -- pairing-code:create', () => {
  it('prints a code once that pairs a device of that brand', async () => {
    const { brandId } = await t.createBrand('CLI Brand');
    const res = cli('pairing-code:create', '--brand', String(brandId), '--ttl-minutes', '30');
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

  it('fails clearly: unknown brand (1), missing or bad options and unknown commands (64)', () => {
    const unknown = cli('pairing-code:create', '--brand', '999999');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('BRAND_NOT_FOUND');
    expect(unknown.stdout).toBe('');
    const missing = cli('pairing-code:create');
    expect(missing.status).toBe(64);
    expect(missing.stderr).toContain('--brand must be a positive whole number');
    expect(cli('pairing-code:create', '--brand', '1', '--bogus').status).toBe(64);
    expect(cli('pairing-code:create', '--brand', '1', '--ttl-minutes', '0').status).toBe(64);
    const nope = cli('nope');
    expect(nope.status).toBe(64);
    expect(nope.stderr).toContain('pairing-code:create');
    expect(cli('--help').status).toBe(0);
  });
});
