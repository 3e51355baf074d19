import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newPairingCode, tokenKeys } from '../support/device.ts';
import { seedGateway } from '../support/seed.ts';
import { run } from '../../scripts/device-sim.ts';
import { signDeviceToken } from '../../server/domain/devices/tokens.ts';
import { enqueueOutboundSms } from '../../server/domain/outbound-sms/service.ts';
import { createNotification } from '../../server/domain/notifications/service.ts';

let t: TestContext;
let brandId: number;
let dir: string;
let state: string;

beforeAll(async () => {
  t = await startTestServer();
  ({ brandId } = await t.createBrand('Simulator Brand'));
  // The phone's allowed senders are the enabled gateways' official senders.
  await seedGateway(t, 'bkash');
  dir = mkdtempSync(path.join(os.tmpdir(), 'device-sim-'));
  state = path.join(dir, 'state.json');
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the simulator in-process; returns exit code and what it printed. */
async function sim(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run([...argv, '--state', state], { out: (l) => out.push(l), err: (l) => err.push(l) });
  const stdout = out.join('\n');
  return { code, stdout, stderr: err.join('\n'), json: () => JSON.parse(stdout) };
}

const readState = () => JSON.parse(readFileSync(state, 'utf8'));
const deviceId = async () => Number((await t.sql<{ id: string }>('SELECT id FROM devices WHERE uuid = $1', [readState().deviceId]))[0]!.id);

describe('device simulator, on the device SDK, against the live service', () => {
  it('pair stores the tokens in a 0600 state file and never prints them', async () => {
    const code = await newPairingCode(t, brandId);
    const r = await sim('pair', '--code', code, '--base-url', t.baseUrl, '--name', 'Demo phone');
    expect(r.code).toBe(0);
    const s = readState();
    expect(r.stdout).toBe(`paired as ${s.deviceId} ("Demo phone") with ${t.baseUrl}; tokens stored in ${state}`);
    expect(statSync(state).mode & 0o777).toBe(0o600);
    expect(s).toMatchObject({ baseUrl: t.baseUrl, deviceName: 'Demo phone', tokens: { accessToken: expect.any(String), refreshToken: expect.any(String) } });
    expect(s.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(r.stdout).not.toContain(s.tokens.accessToken);
    const [row] = await t.sql<{ name: string; app_version: string }>('SELECT name, app_version FROM devices WHERE uuid = $1', [s.deviceId]);
    expect(row).toEqual({ name: 'Demo phone', app_version: 'sim-0.1.0' });
  });

  it('heartbeat reports battery and network', async () => {
    const r = await sim('heartbeat', '--battery', '55', '--network', 'wifi', '--json');
    expect(r.code).toBe(0);
    expect(Date.parse(r.json().server_time)).toBeGreaterThan(Date.now() - 60_000);
    const [row] = await t.sql<{ battery_level: number; network: string }>('SELECT battery_level, network FROM devices WHERE id = $1', [await deviceId()]);
    expect(row).toEqual({ battery_level: 55, network: 'wifi' });
  });

  it('sms forwards what the filter rules allow and keeps OTPs on the phone', async () => {
    const file = path.join(dir, 'sms.json');
    writeFileSync(
      file,
      JSON.stringify([
        { from: 'bKash', body: 'You have received Tk 80.00 from 01712345678. Fee Tk 0.00. Balance Tk 580.00. TrxID SIM0000001 at 15/03/2024 14:32', device_message_id: 'phone-1' },
        { sender: 'bKash', body: 'Your bKash verification code is 445566. Do not share it.', device_message_id: 'phone-2' },
        { sender: '01999999999', body: 'You have received Tk 5.00', device_message_id: 'phone-3' },
      ]),
    );
    const r = await sim('sms', '--file', file, '--json');
    expect(r.code).toBe(0);
    const { results, rules_version } = r.json();
    expect(rules_version).toBeGreaterThanOrEqual(1);
    expect(results).toEqual([
      { sender: 'bKash', forwarded: false, reason: 'negative_keyword' },
      { sender: '01999999999', forwarded: false, reason: 'sender_not_allowed' },
      { forwarded: true, device_message_id: 'phone-1', id: expect.any(Number), match_status: expect.any(String), screen_reason: null, trx_id: null, duplicate_of: null },
    ]);
    const stored = await t.sql<{ device_message_id: string }>('SELECT device_message_id FROM sms_records WHERE device_id = $1', [await deviceId()]);
    expect(stored).toEqual([{ device_message_id: 'phone-1' }]);

    // The same text again under a new message id is a duplicate, never a second payment.
    const again = await sim('sms', '--from', 'bKash', '--body', JSON.parse(readFileSync(file, 'utf8'))[0].body, '--json');
    expect(again.json().results[0]).toMatchObject({ forwarded: true, match_status: 'duplicate', duplicate_of: results[2].id });
  });

  it('queue leases the outbound SMS and reports them sent', async () => {
    const em = t.runtime.deps.db;
    const a = await enqueueOutboundSms(em, t.runtime.deps.crypto.pii, { brandId, phone: '01712345678', message: 'Your order 1 is ready' });
    const b = await enqueueOutboundSms(em, t.runtime.deps.crypto.pii, { brandId, phone: '01812345678', message: 'Your order 2 is ready' });
    const r = await sim('queue');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe([`#${a.id} to +8801712345678: Your order 1 is ready`, '  -> sent', `#${b.id} to +8801812345678: Your order 2 is ready`, '  -> sent'].join('\n'));
    const rows = await t.sql<{ id: string; status: string }>('SELECT id, status FROM outbound_sms WHERE id = ANY($1) ORDER BY id', [[a.id, b.id]]);
    expect(rows.map((x) => x.status)).toEqual(['sent', 'sent']);
    expect((await sim('queue', '--json')).json()).toEqual({ items: [], reported: [] });
  });

  it('queue --report failed needs a reason and records it', async () => {
    expect((await sim('queue', '--report', 'failed')).code).toBe(64);
    const { id } = await enqueueOutboundSms(t.runtime.deps.db, t.runtime.deps.crypto.pii, { brandId, phone: '01712345678', message: 'x' });
    const r = await sim('queue', '--report', 'failed', '--reason', 'no credit', '--json');
    expect(r.json().reported).toEqual([expect.objectContaining({ id, status: 'failed', failure_reason: 'no credit' })]);
  });

  it('notifications --ack, rules and dashboard', async () => {
    await createNotification(t.runtime.deps.db, t.runtime.deps.crypto.pii, { brandId, deviceId: await deviceId(), title: 'Hello', body: 'Check the queue' });
    const n = await sim('notifications', '--ack', '--json');
    expect(n.json()).toMatchObject({ notifications: [{ title: 'Hello', body: 'Check the queue' }], acknowledged: 1 });
    expect((await sim('notifications', '--json')).json()).toEqual({ notifications: [], acknowledged: 0 });
    const rules = await sim('rules');
    expect(rules.stdout).toMatch(/^version \d+ \(re-check every \d+ h\)\n {2}senders: .*bKash/);
    const dash = await sim('dashboard', '--json');
    expect(dash.json()).toMatchObject({ unread_notifications: 0, recent_transactions: [] });
  });

  it('an expired access token is refreshed on the way and the rotated pair lands in the state file', async () => {
    const before = readState();
    const sub = JSON.parse(Buffer.from(before.tokens.accessToken.split('.')[1], 'base64url').toString()).sub;
    writeFileSync(state, JSON.stringify({ ...before, tokens: { ...before.tokens, accessToken: signDeviceToken(tokenKeys(t), 'access', sub, new Date(0)).token } }));
    expect((await sim('heartbeat')).code).toBe(0);
    const after = readState();
    expect(after.tokens.refreshToken).not.toBe(before.tokens.refreshToken);
    expect(after.fingerprint).toBe(before.fingerprint);
    expect((await sim('heartbeat')).code).toBe(0);
    expect(readState().tokens).toEqual(after.tokens);
  });

  it('usage errors exit 64 with help; API errors exit 1 with the code and request id', async () => {
    expect((await sim('fly')).code).toBe(64);
    expect((await sim('heartbeat', '--battery', '101')).code).toBe(64);
    expect((await sim('pair')).stderr).toMatch(/^--code is required\n\nUsage: npm run device-sim -- pair --code <code>/);
    expect((await sim('sms', '--bogus')).code).toBe(64);
    const used = await sim('pair', '--code', 'NOPE-NOPE', '--base-url', t.baseUrl, '--state', path.join(dir, 'other.json'));
    expect(used.code).toBe(1);
    expect(used.stderr).toMatch(/^error INVALID_PAIRING_CODE \(HTTP 401\): Invalid pairing code \[request req_[0-9a-f]{32}\]$/);
  });

  it('runs as a real command: --help, and --json on stdout', async () => {
    // Asynchronous on purpose: the service under test lives in this process and must keep answering.
    const cli = (...args: string[]) =>
      new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [path.resolve('scripts/device-sim.ts'), ...args], { encoding: 'utf8' }, (err, stdout, stderr) =>
          resolve({ status: err ? Number(err.code) : 0, stdout, stderr }),
        );
      });
    const help = await cli('queue', '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run device-sim -- queue \[--report sent\|failed\|delivered\|none\]/);
    const rules = await cli('rules', '--json', '--state', state);
    expect(rules.status, rules.stderr).toBe(0);
    expect(JSON.parse(rules.stdout).negative_keywords).toContain('OTP');
    const unpaired = await cli('dashboard', '--state', path.join(dir, 'none.json'));
    expect(unpaired.status).toBe(2);
    expect(unpaired.stderr).toContain('Pair again: npm run device-sim -- pair --code');
  });
});
