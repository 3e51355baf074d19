import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Browser tests: `npm run test:e2e`. Same database setup as the unit and
// integration tests (one PostgreSQL, one database per file); one file at a time,
// because each drives a real Chromium.
export default defineConfig({
  root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A poll waits for a real browser and a real server on a shared machine (a login
    // hashes a password with scrypt): one second is too short under load.
    expect: { poll: { timeout: 15_000 } },
  },
});
