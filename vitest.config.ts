import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    pool: 'forks',
    // Most of a file's time is spent waiting (on PostgreSQL, the job queue, child
    // processes, HTTP round trips), not computing, so several files at once keep
    // two cores busy; vitest's default (cores - 1) would run them one by one on a
    // 2-core machine. Measured in BENCHMARKS.md ("Test suite").
    maxWorkers: 4,
    // A worker keeps its loaded modules from one file to the next instead of
    // starting a fresh process and importing the server again per file. Files
    // still share no state: each one starts its own server over its own database
    // and closes it in afterAll.
    isolate: false,
    env: {
      // The suite starts many Node children (the CLI, the device simulator, server
      // and worker processes): with the compile cache each parses and strips the
      // same TypeScript once per machine instead of once per start (about half a
      // child's start-up CPU). Entries are checked against the source, never stale.
      NODE_COMPILE_CACHE: path.resolve('node_modules/.cache/node-compile-cache'),
    },
    globalSetup: ['test/support/global-setup.ts', 'test/support/reliability-setup.ts'],
    // Files share two cores now: a test that starts several Node children in a row
    // (the CLI suites) needs more than 30 s when its neighbours compute.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
