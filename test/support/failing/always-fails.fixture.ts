import { expect, it } from 'vitest';
import { startTestServer } from '../harness.ts';

it('fails on purpose, after using the embedded database', async () => {
  const t = await startTestServer();
  await t.close();
  expect(1 + 1).toBe(3);
});
