import { defineConfig } from 'vitest/config';

// Used only by test/integration/test-runner-exit.test.ts: a run that must fail.
export default defineConfig({
  test: {
    root: new URL('../../..', import.meta.url).pathname,
    include: ['test/support/failing/*.fixture.ts'],
    globalSetup: ['test/support/global-setup.ts'],
  },
});
