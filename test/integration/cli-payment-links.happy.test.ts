import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { runCli } from './admin-support.ts';

/** payment-links:create|list|deactivate, as a child process against the running service, with a brand API key. */

let t: TestContext;
let apiKey: string;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('CLI Links', { mode: 'test' }));
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const cli = (args: string[], env: Record<string, string> = {}) => runCli(t, args, env);

describe('payment links from the CLI', () => {
  it('creates a fixed and a customer-entered link, lists them, deactivates one', async () => {
    const fixed = await cli(['payment-links:create', '--api-key', apiKey, '--currency', 'BDT', '--amount', '500.00', '--single-use', '--description', 'Stall 4', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    const a = fixed.json();
    expect(a).toMatchObject({ amount: '500.00', currency: 'BDT', single_use: true, description: 'Stall 4', status: 'active' });
    expect(a.qr_png_url).toBe(`${a.url}/qr.png`);

    const open = await cli(['payment-links:create', '--currency', 'BDT', '--min-amount', '50.00', '--json'], { PAYCOLLECT_API_KEY: apiKey });
    expect(open.code, open.stderr).toBe(0);
    const b = open.json();
    expect(b).toMatchObject({ amount: null, min_amount: '50.00', single_use: false });

    const list = await cli(['payment-links:list', '--api-key', apiKey]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(a.id);
    expect(list.stdout).toContain(b.id);

    const off = await cli(['payment-links:deactivate', '--api-key', apiKey, '--link', a.id, '--json']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.json()).toMatchObject({ id: a.id, active: false, status: 'inactive' });
  });

  it('refuses without a key (usage) and reports the API error naming the field', async () => {
    const noKey = await cli(['payment-links:list'], { PAYCOLLECT_API_KEY: '' });
    expect(noKey.code).toBe(64);
    expect(noKey.stderr).toContain('--api-key');
    const bad = await cli(['payment-links:create', '--api-key', apiKey, '--currency', 'BDT', '--amount', '5.00', '--min-amount', '1.00']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('min_amount');
    const unknown = await cli(['payment-links:deactivate', '--api-key', apiKey, '--link', 'plink_000000000000000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('PAYMENT_LINK_NOT_FOUND');
  });
});
