import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { pairDevice } from '../support/device.ts';
import { seedGateway } from '../support/seed.ts';
import { runCli } from './admin-support.ts';

/** accounts:list/add/update/remove: a brand's wallet accounts from a terminal, over the admin API. */

let t: TestContext;
let brandId: number;
let deviceId: number;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  await seedGateway(t, 'bkash', { code: 'cli-wa-bkash' });
  brandId = (await t.createBrand('CLI Wallet Shop')).brandId;
  deviceId = (await pairDevice(t, { brandId, name: 'Counter phone' })).deviceId;
});
afterAll(() => t?.close());

const cli = (args: string[]) => runCli(t, args);

describe('accounts:* over the admin API, as a child process', () => {
  it('adds an account bound to a phone and SIM, lists it, changes it (--device none clears the binding) and removes it', async () => {
    const added = await cli([
      'accounts:add', '--brand', String(brandId), '--gateway', 'cli-wa-bkash', '--number', '01711000001', '--type', 'agent',
      '--label', 'Shop bKash 2', '--daily-limit', '25000.00', '--device', String(deviceId), '--sim', '1', '--json',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const account = added.json();
    expect(account).toMatchObject({
      brand_id: brandId, gateway: 'cli-wa-bkash', number: '01711000001', account_type: 'agent', label: 'Shop bKash 2',
      daily_limit: '25000.00', used_today: '0.00', enabled: true, device_id: deviceId, sim_slot: 1, last_assigned_at: null,
    });

    const disabled = await cli(['accounts:add', '--brand', String(brandId), '--gateway', 'cli-wa-bkash', '--number', '01711000002', '--disabled', '--json']);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.json()).toMatchObject({ enabled: false, account_type: 'personal', label: null, device_id: null, sim_slot: null });

    const listed = await cli(['accounts:list', '--brand', String(brandId)]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('01711000001');
    expect(listed.stdout).toContain('Shop bKash 2');
    expect(listed.stdout).toContain('01711000002');
    const narrowed = await cli(['accounts:list', '--brand', String(brandId), '--gateway', 'nope', '--json']);
    expect(narrowed.json()).toEqual([]);

    const moved = await cli(['accounts:update', '--account', String(account.id), '--sim', '0', '--daily-limit', 'none', '--label', 'none', '--disable', '--json']);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.json()).toMatchObject({ id: account.id, sim_slot: 0, device_id: deviceId, daily_limit: null, label: null, enabled: false });
    const unbound = await cli(['accounts:update', '--account', String(account.id), '--device', 'none', '--enable', '--json']);
    expect(unbound.code, unbound.stderr).toBe(0);
    expect(unbound.json()).toMatchObject({ device_id: null, sim_slot: null, enabled: true });

    const removed = await cli(['accounts:remove', '--account', String(account.id)]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(`deleted wallet account ${account.id}\n`);
    const left = await cli(['accounts:list', '--brand', String(brandId), '--json']);
    expect(left.json().map((a: { number: string }) => a.number)).toEqual(['01711000002']);
    expect((await t.sql<{ action: string }>("SELECT action FROM audit_log WHERE action LIKE 'wallet_account.%' ORDER BY id")).map((r) => r.action)).toEqual([
      'wallet_account.create', 'wallet_account.create', 'wallet_account.update', 'wallet_account.update', 'wallet_account.delete',
    ]);
  });

  it('failures: usage mistakes exit 64 before any call; the API’s refusals (bad number, duplicate, unknown account, SIM without phone) exit 1 with its code and field', async () => {
    const noBrand = await cli(['accounts:list']);
    expect(noBrand.code).toBe(64);
    expect(noBrand.stderr).toContain('--brand must be a positive whole number');
    const noNumber = await cli(['accounts:add', '--brand', String(brandId), '--gateway', 'cli-wa-bkash']);
    expect(noNumber.code).toBe(64);
    expect(noNumber.stderr).toContain('--number is required');
    const badType = await cli(['accounts:add', '--brand', String(brandId), '--gateway', 'cli-wa-bkash', '--number', '01711000003', '--type', 'savings']);
    expect(badType.code).toBe(64);
    expect(badType.stderr).toContain('--type must be one of personal, agent, merchant');
    const badSim = await cli(['accounts:update', '--account', '1', '--sim', 'two']);
    expect(badSim.code).toBe(64);
    const nothing = await cli(['accounts:update', '--account', '1']);
    expect(nothing.code).toBe(64);
    expect(nothing.stderr).toContain('give at least one field to change');
    const both = await cli(['accounts:update', '--account', '1', '--enable', '--disable']);
    expect(both.code).toBe(64);

    const badNumber = await cli(['accounts:add', '--brand', String(brandId), '--gateway', 'cli-wa-bkash', '--number', 'call me', '--json']);
    expect(badNumber.code).toBe(1);
    expect(badNumber.json().error).toMatchObject({ code: 'VALIDATION_ERROR', status: 400, errors: [expect.objectContaining({ field: 'number' })] });

    const first = await cli(['accounts:add', '--brand', String(brandId), '--gateway', 'cli-wa-bkash', '--number', '01711000004', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const duplicate = await cli(['accounts:add', '--brand', String(brandId), '--gateway', 'cli-wa-bkash', '--number', '01711000004']);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('error CONFLICT (HTTP 409): The brand already has this number on this gateway');
    expect(duplicate.stderr).toContain('  number: ');

    const simOnly = await cli(['accounts:add', '--brand', String(brandId), '--gateway', 'cli-wa-bkash', '--number', '01711000005', '--sim', '0']);
    expect(simOnly.code).toBe(1);
    expect(simOnly.stderr).toContain('error VALIDATION_ERROR (HTTP 400)');
    expect(simOnly.stderr).toContain('  sim_slot: ');

    const unknown = await cli(['accounts:update', '--account', '999999', '--label', 'x']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error WALLET_ACCOUNT_NOT_FOUND \(HTTP 404\)/);
    const unknownRemove = await cli(['accounts:remove', '--account', '999999']);
    expect(unknownRemove.code).toBe(1);
    expect(unknownRemove.stderr).toMatch(/^error WALLET_ACCOUNT_NOT_FOUND \(HTTP 404\)/);
    const noSuchBrand = await cli(['accounts:list', '--brand', '999999']);
    expect(noSuchBrand.code).toBe(1);
    expect(noSuchBrand.stderr).toMatch(/^error BRAND_NOT_FOUND \(HTTP 404\)/);
  });
});
