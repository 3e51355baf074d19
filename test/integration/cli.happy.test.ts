import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, newFingerprint } from '../support/device.ts';
import { adminToken, runCli } from './admin-support.ts';
import { requestRefund, seedCompletedTransaction, seedGateway } from '../support/seed.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const cli = (args: string[], env: Record<string, string> = {}) => runCli(t, args, env);

describe('the CLI over the admin API, as a child process', () => {
  it('creates a key limited to scopes with an expiry; an unknown scope is a usage error', async () => {
    const { brandId } = await t.createBrand('Scoped by CLI');
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const key = await cli(['api-key:create', '--brand', String(brandId), '--name', 'reports', '--scopes', 'read,refunds', '--expires-at', expires, '--json']);
    expect(key.code, key.stderr).toBe(0);
    expect(key.json()).toMatchObject({ scopes: ['read', 'refunds'], expires_at: expires });
    const bad = await cli(['api-key:create', '--brand', String(brandId), '--name', 'x', '--scopes', 'read,admin']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('--scopes: admin is not one of read, write, refunds, webhooks');
  });

  it("switches a brand's receipts on; a bad switch is a usage error", async () => {
    const { brandId } = await t.createBrand('Receipts by CLI');
    const receipts = await cli(['brand:update', '--brand', String(brandId), '--receipts', 'on', '--json']);
    expect(receipts.code, receipts.stderr).toBe(0);
    expect(receipts.json().receipts_enabled).toBe(true);
    const badSwitch = await cli(['brand:update', '--brand', String(brandId), '--receipts', 'maybe']);
    expect(badSwitch.code).toBe(64);
    expect(badSwitch.stderr).toMatch(/--receipts/);
  });

  it('creates a brand, a key, a gateway and a pairing code, and reads them back', async () => {
    const brand = await cli(['brand:create', '--name', 'CLI Shop', '--timezone', 'Asia/Dhaka', '--json']);
    expect(brand.code, brand.stderr).toBe(0);
    const { id: brandId, name, timezone, status } = brand.json();
    expect({ name, timezone, status }).toEqual({ name: 'CLI Shop', timezone: 'Asia/Dhaka', status: 'active' });

    const key = await cli(['api-key:create', '--brand', String(brandId), '--name', 'backend', '--json']);
    expect(key.code, key.stderr).toBe(0);
    const apiKey = key.json();
    expect(apiKey.key).toMatch(/^sk_live_/);
    expect((await t.request('GET', '/api/v1/brand', { token: apiKey.key })).body.data.name).toBe('CLI Shop');

    const gateway = await cli([
      'gateway:create', '--code', 'cli-bkash', '--name', 'bKash', '--type', 'manual', '--methods', 'send_money', '--currencies', 'BDT',
      '--min-amount', '10.00', '--max-amount', '25000.00', '--fee-percent', '1.85', '--account', '01700000000', '--sms-preset', 'bkash', '--json',
    ]);
    expect(gateway.code, gateway.stderr).toBe(0);
    expect(gateway.json()).toMatchObject({ code: 'cli-bkash', sms_senders: ['bKash'], fee_percent: '1.85', max_amount: '25000.00', enabled: true });
    // The bKash preset: money-in and money-out templates.
    expect(gateway.json().sms_templates.length).toBeGreaterThan(1);
    expect(gateway.json().sms_templates[0]).toMatchObject({ direction: 'in', kind: 'received' });
    expect(gateway.json().sms_templates.some((x: { direction: string }) => x.direction === 'out')).toBe(true);

    const code = await cli(['pairing-code:create', '--brand', String(brandId), '--ttl-minutes', '30', '--json']);
    expect(code.code, code.stderr).toBe(0);
    const pairing = code.json();
    expect(pairing).toMatchObject({ brand_id: brandId, code: expect.stringMatching(/^[0-9A-Z]{5}-[0-9A-Z]{5}$/) });
    const paired = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: pairing.code, body: { fingerprint: newFingerprint(), device_name: 'CLI phone' } });
    expect(paired.status).toBe(201);

    // Read back, as JSON and as text.
    const brands = await cli(['brand:list', '--json']);
    expect(brands.json().data.map((b: { name: string }) => b.name)).toContain('CLI Shop');
    const keys = await cli(['api-key:list', '--brand', String(brandId), '--json']);
    expect(keys.json()).toEqual([expect.objectContaining({ id: apiKey.id, prefix: apiKey.prefix, revoked_at: null })]);
    expect(keys.stdout).not.toContain(apiKey.key);
    const gw = await cli(['gateway:get', '--code', 'cli-bkash']);
    expect(gw.code).toBe(0);
    expect(gw.stdout).toMatch(/^code:\s+cli-bkash$/m);
    expect(gw.stdout).toMatch(/^fee_percent:\s+1\.85$/m);
    const devices = await cli(['device:list', '--brand', String(brandId), '--json']);
    expect(devices.json().data).toEqual([expect.objectContaining({ name: 'CLI phone', presence: 'online', brand_id: brandId })]);
    const text = await cli(['pairing-code:create', '--brand', String(brandId)]);
    expect(text.stdout).toMatch(/^Pairing code: [0-9A-Z]{5}-[0-9A-Z]{5}\nBrand: {8}\d+\nMode: {9}live\nExpires at: {3}\S+Z\n/);

    // Every change the CLI made is in the audit log under its actor label.
    const audit = await cli(['audit:list', '--brand', String(brandId), '--json']);
    expect(audit.json().data.map((e: { action: string; actor: string }) => `${e.actor} ${e.action}`).reverse()).toEqual([
      'admin:cli brand.create',
      'admin:cli api_key.create',
      'admin:cli pairing_code.create',
      'admin:cli pairing_code.create',
    ]);
  });

  it('refund:complete records the wallet reference and note; without a reference a manual gateway refund is refused (exit 1) and stays pending', async () => {
    const { apiKey } = await t.createBrand('CLI Refund Shop');
    const gateway = await seedGateway(t, 'bkash');
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway, amount: '300.00' });
    const refund = (await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '30.00' })).body.data as { id: number };
    const refused = await cli(['refund:complete', '--refund', String(refund.id), '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('wallet reference');
    const done = await cli(['refund:complete', '--refund', String(refund.id), '--reference', 'BK5RET77', '--note', 'from the counter wallet', '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.json()).toMatchObject({ id: refund.id, status: 'completed', completion_reference: 'BK5RET77', completion_note: 'from the counter wallet' });
  });

  it('takes the token from --admin-token or ADMIN_TOKEN, and the actor from --actor', async () => {
    const viaFlag = await cli(['brand:create', '--name', 'Flag', '--admin-token', adminToken(t), '--actor', 'alice', '--json'], { DATA_DIR: '/nonexistent' });
    expect(viaFlag.code, viaFlag.stderr).toBe(0);
    const viaEnv = await cli(['settings:get', '--json'], { DATA_DIR: '/nonexistent', ADMIN_TOKEN: adminToken(t) });
    expect(viaEnv.json()).toEqual({ intent_expiry_minutes: 60, match_threshold: 0.8, match_window_minutes: 1440, match_clock_grace_seconds: 300, device_offline_minutes: 60, battery_low_percent: 15, review_waiting_minutes: 30, sms_alarm_window_minutes: 60, sms_alarm_min_messages: 5, sms_alarm_rise: 0.5 });
    const [row] = await t.sql<{ actor: string }>("SELECT actor FROM audit_log WHERE action = 'brand.create' AND target_id = $1", [String(viaFlag.json().id)]);
    expect(row!.actor).toBe('admin:alice');
  });

  it('--help on the top level and on every command', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    for (const name of ['brand:create', 'api-key:revoke', 'gateway:update', 'rate:set', 'filter-rules:set', 'device:revoke', 'pairing-code:create', 'transaction:verify', 'sms:list', 'refund:fail', 'delivery:replay-dead', 'webhooks:test', 'outbound-sms:enqueue', 'notification:send', 'settings:set', 'audit:list', 'sms:paste', 'device:backfill', 'backfill:list', 'payment-links:create', 'payment-links:deactivate', 'accounts:list', 'accounts:add', 'accounts:update', 'accounts:remove']) {
      expect(top.stdout).toContain(`  ${name} `);
    }
    const one = await cli(['refund:fail', '--help']);
    expect(one.code).toBe(0);
    expect(one.stdout.split('\n')[0]).toBe('Usage: npm run cli -- refund:fail --refund <id> --reason <why>');
    expect(one.stdout).toContain('--admin-token <token>');
    // The registry is the list: the top-level help names exactly its commands, each
    // with its summary, and every one of them answers its own --help with its options.
    const { commands, run } = await import('../../scripts/cli.ts');
    const section = top.stdout.slice(top.stdout.indexOf('Commands:\n') + 'Commands:\n'.length).split('\n\n')[0]!;
    const listed = section.split('\n').map((line) => line.trim().split(/\s{2,}/));
    expect(listed).toEqual(Object.entries(commands).map(([name, c]) => [name, c.summary]));
    expect(listed.length).toBeGreaterThan(0);
    for (const [name, command] of Object.entries(commands)) {
      const out: string[] = [];
      const io = { out: (x: string) => out.push(x), err: (x: string) => out.push(x) };
      expect(await run([name, '--help'], io, {}), name).toBe(0);
      const help = out.join('\n');
      expect(help.startsWith(`Usage: npm run cli -- ${name} ${command.usage}`.trimEnd() + '\n'), name).toBe(true);
      for (const option of Object.keys(command.options)) expect(help, `${name} --${option}`).toContain(`--${option}`);
    }
  });
});
