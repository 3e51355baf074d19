import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    pool: 'forks',
    globalSetup: ['test/support/global-setup.ts', 'test/support/reliability-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
