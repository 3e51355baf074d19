import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest } from './admin-support.ts';
import { deviceRequest, newFingerprint, newPairingCode, pairDevice, type PairedDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newGatewayTrxId, smsBodies, smsScene, type SmsScene } from '../support/sms-matching.ts';
import { run as runSim } from '../../scripts/device-sim.ts';
import { PaycollectDevice, SmsSequencer, answerBackfillRequests, screenedRanges } from '../../clients/device/index.ts';

/**
 * Per-SIM sequence numbers (docs/recovery.md "Sequence numbers"): a hole is
 * seen at once and asked for by number; screened numbers are not holes;
 * retries change nothing; SIMs and epochs count on their own; the completeness
 * view says whether anything is missing.
 */
let t: TestContext;
let scene: SmsScene;
beforeAll(async () => {
  t = await startTestServer();
  scene = await smsScene(t);
});
afterAll(() => t?.close());

let n = 0;
const sms = (sequence: number | undefined, extra: Record<string, unknown> = {}) => ({
  device_message_id: `seq-${process.pid}-${++n}-${randomBytes(3).toString('hex')}`,
  sender: 'bKash',
  body: smsBodies.bkash('10.00', newGatewayTrxId(), '01712345515'),
  received_at: new Date().toISOString(),
  ...(sequence === undefined ? {} : { sequence }),
  ...extra,
});

async function forward(device: PairedDevice, body: Record<string, unknown>) {
  const res = await deviceRequest(t, device, 'POST', '/sms/messages', { messages: [], ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}
const commands = async (device: PairedDevice) => {
  const res = await deviceRequest(t, device, 'GET', '/commands');
  expect(res.status).toBe(200);
  return res.body.data as Array<{ id: number; reason: string; sequences?: { sim_slot: number | null; sequence_epoch: string; numbers: number[] } }>;
};
const gapCommands = async (device: PairedDevice) => (await commands(device)).filter((c) => c.reason === 'sequence_gap');
const completeness = async (deviceId: number) => {
  const res = await adminRequest(t, 'GET', `/devices/${deviceId}/sms-completeness`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};
const newDevice = () => pairDevice(t, { brandId: scene.brandId });

describe('holes', () => {
  it('a missing number is asked for at once, by number; re-forwarding it closes the hole', async () => {
    const d = await newDevice();
    expect((await completeness(d.deviceId)).verdict).toBe('unknown');
    await forward(d, { sequence_epoch: 'install-1', messages: [sms(1, { sim_slot: 0 }), sms(2, { sim_slot: 0 })] });
    expect(await gapCommands(d)).toEqual([]);
    expect((await completeness(d.deviceId)).verdict).toBe('complete');

    const missed = sms(3, { sim_slot: 0 });
    await forward(d, { sequence_epoch: 'install-1', messages: [sms(5, { sim_slot: 0 })] });
    const [gap, ...more] = await gapCommands(d);
    expect(more).toEqual([]);
    expect(gap!.sequences).toEqual({ sim_slot: 0, sequence_epoch: 'install-1', numbers: [3, 4] });
    const view = await completeness(d.deviceId);
    expect(view).toMatchObject({ verdict: 'missing', highest: 5, missing_count: 2, screened_count: 0 });
    expect(view.counters).toEqual([expect.objectContaining({ sim_slot: 0, sequence_epoch: 'install-1', highest: 5, missing: [3, 4], forwarded_count: 3 })]);
    // The admin list of backfill requests shows the numbers too.
    const listed = await adminRequest(t, 'GET', `/backfill-requests?device_id=${d.deviceId}`);
    expect(listed.body.data.find((r: { id: number }) => r.id === gap!.id)).toMatchObject({ reason: 'sequence_gap', sequences: { sim_slot: 0, numbers: [3, 4] } });

    // The phone answers: 3 was forwarded-worthy, 4 its rules screened out.
    await forward(d, { sequence_epoch: 'install-1', messages: [missed], screened_sequences: [{ sim_slot: 0, from: 4, to: 4 }] });
    const done = await deviceRequest(t, d, 'POST', `/commands/${gap!.id}/complete`, { resent_count: 1 });
    expect(done.status).toBe(200);
    expect(await gapCommands(d)).toEqual([]);
    expect(await completeness(d.deviceId)).toMatchObject({ verdict: 'complete', highest: 5, missing_count: 0, screened_count: 1 });
  });

  it('a hole already asked for is not asked again; a new hole is asked on its own', async () => {
    const d = await newDevice();
    await forward(d, { messages: [sms(1), sms(3)] });
    await forward(d, { messages: [sms(4)] });
    expect((await gapCommands(d)).map((c) => c.sequences)).toEqual([{ sim_slot: null, sequence_epoch: 'default', numbers: [2] }]);
    await forward(d, { messages: [sms(6)] });
    expect((await gapCommands(d)).map((c) => c.sequences!.numbers)).toEqual([[2], [5]]);
  });

  it('screened numbers (reported by the phone, or refused by the service) are not holes', async () => {
    const d = await newDevice();
    const data = await forward(d, {
      messages: [sms(1, { sim_slot: 1 }), sms(4, { sim_slot: 1, sender: 'NotAWallet' }), sms(5, { sim_slot: 1 })],
      screened_sequences: [{ sim_slot: 1, from: 2, to: 3 }],
    });
    expect(data[1].match_status).toBe('screened_out');
    expect(await gapCommands(d)).toEqual([]);
    expect(await completeness(d.deviceId)).toMatchObject({ verdict: 'complete', highest: 5, screened_count: 3, missing_count: 0 });
    // Screened numbers alone (every SMS of the batch refused on the phone): no message needed.
    await forward(d, { screened_sequences: [{ sim_slot: 1, from: 6, to: 6 }] });
    expect(await completeness(d.deviceId)).toMatchObject({ verdict: 'complete', highest: 6, screened_count: 4 });
  });

  it('a retried request changes nothing and asks once', async () => {
    const d = await newDevice();
    const body = { messages: [sms(1, { sim_slot: 0 }), sms(4, { sim_slot: 0 })], screened_sequences: [{ sim_slot: 0, from: 2, to: 2 }] };
    const [a, b] = await Promise.all([forward(d, body), forward(d, body)]);
    expect(a.map((x: { id: number }) => x.id)).toEqual(b.map((x: { id: number }) => x.id));
    await forward(d, body);
    expect((await gapCommands(d)).map((c) => c.sequences!.numbers)).toEqual([[3]]);
    expect(await completeness(d.deviceId)).toMatchObject({ verdict: 'missing', highest: 4, missing_count: 1, screened_count: 1 });
    const [row] = await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_sequence_counters WHERE device_id = $1', [d.deviceId]);
    expect(Number(row!.n)).toBe(1);
  });

  it('two SIMs count on their own', async () => {
    const d = await newDevice();
    await forward(d, { messages: [sms(1, { sim_slot: 0 }), sms(2, { sim_slot: 0 }), sms(1, { sim_slot: 1 })] });
    expect(await gapCommands(d)).toEqual([]);
    await forward(d, { messages: [sms(3, { sim_slot: 1 })] });
    expect((await gapCommands(d)).map((c) => c.sequences)).toEqual([{ sim_slot: 1, sequence_epoch: 'default', numbers: [2] }]);
    const view = await completeness(d.deviceId);
    expect(view.counters.map((c: { sim_slot: number; highest: number; missing: number[] }) => [c.sim_slot, c.highest, c.missing])).toEqual([
      [0, 2, []],
      [1, 3, [2]],
    ]);
  });

  it('a new epoch (reinstall) starts at 1 without a hole; the old counter is kept apart', async () => {
    const d = await newDevice();
    await forward(d, { sequence_epoch: 'old-install', messages: [sms(1), sms(2), sms(3)] });
    await forward(d, { sequence_epoch: 'new-install', messages: [sms(1)] });
    expect(await gapCommands(d)).toEqual([]);
    const view = await completeness(d.deviceId);
    expect(view).toMatchObject({ verdict: 'complete', highest: 3 });
    expect(view.counters.map((c: { sequence_epoch: string; highest: number }) => [c.sequence_epoch, c.highest]).sort()).toEqual([
      ['new-install', 1],
      ['old-install', 3],
    ]);
  });
});

describe('bad values: 400 naming the field, nothing recorded', () => {
  it.each([
    ['a zero sequence', { messages: [sms(0)] }, 'messages.0.sequence'],
    ['a fractional sequence', { messages: [sms(1.5)] }, 'messages.0.sequence'],
    ['a sequence too large', { messages: [sms(2_147_483_647)] }, 'messages.0.sequence'],
    ['a reversed screened range', { messages: [sms(1)], screened_sequences: [{ sim_slot: 0, from: 3, to: 2 }] }, 'screened_sequences.0.to'],
    ['a screened range without its slot', { screened_sequences: [{ from: 1, to: 2 }] }, 'screened_sequences.0.sim_slot'],
    ['a screened slot out of range', { screened_sequences: [{ sim_slot: 8, from: 1, to: 2 }] }, 'screened_sequences.0.sim_slot'],
    ['a bad epoch', { messages: [sms(1)], sequence_epoch: 'has space' }, 'sequence_epoch'],
    ['neither messages nor screened numbers', { messages: [], screened_sequences: [] }, 'messages'],
  ])('%s', async (_name, body, field) => {
    const d = await newDevice();
    const res = await deviceRequest(t, d, 'POST', '/sms/messages', body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    const [row] = await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_sequence_counters WHERE device_id = $1', [d.deviceId]);
    expect(Number(row!.n)).toBe(0);
  });
});

describe('completeness view', () => {
  it('an unknown device is 404 DEVICE_NOT_FOUND; the list has every active phone with its verdict', async () => {
    const missing = await adminRequest(t, 'GET', '/devices/999999/sms-completeness');
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0].code).toBe('DEVICE_NOT_FOUND');
    const d = await newDevice();
    await forward(d, { messages: [sms(2)] });
    const list = await adminRequest(t, 'GET', `/phones/sms-completeness?brand_id=${scene.brandId}`);
    expect(list.status).toBe(200);
    expect(list.body.data.find((v: { device_id: number }) => v.device_id === d.deviceId)).toMatchObject({ verdict: 'missing', missing_count: 1, highest: 2 });
    expect(list.body.data.find((v: { device_id: number }) => v.device_id === scene.device.deviceId)).toMatchObject({ verdict: 'unknown', highest: null });
  });
});

describe('device SDK', () => {
  it('numbers SMS per SIM with a persisted counter, and answers a sequence backfill with exactly the missing SMS', async () => {
    const device = new PaycollectDevice({ baseUrl: t.baseUrl, fingerprint: newFingerprint() });
    await device.pair(await newPairingCode(t, scene.brandId), { device_name: 'Seq phone', app_version: '2.0.0' });
    const deviceId = Number((await t.sql<{ id: string }>("SELECT id FROM devices WHERE name = 'Seq phone' ORDER BY id DESC LIMIT 1"))[0]!.id);

    let seq = new SmsSequencer(null, { newEpoch: () => 'sdk-epoch-1' });
    const inbox: Array<ReturnType<typeof sms> & { sequence: number; sim_slot: number | null }> = [];
    const receive = (simSlot: number) => {
      const m = { ...sms(undefined), sim_slot: simSlot, sequence: seq.next(simSlot) };
      inbox.push(m);
      return m;
    };
    const a = receive(0);
    await device.smsMessages.forward({ messages: [a], sequence_epoch: seq.epoch });
    // The app restarts: the counter comes back from storage.
    seq = new SmsSequencer(JSON.parse(JSON.stringify(seq.state())));
    const lost = receive(0); // never forwarded: the app was killed
    const screened = receive(0); // an OTP its rules screened out
    const c = receive(0);
    const other = receive(1);
    expect([a.sequence, lost.sequence, screened.sequence, c.sequence, other.sequence]).toEqual([1, 2, 3, 4, 1]);
    await device.smsMessages.forward({ messages: [c, other], sequence_epoch: seq.epoch, screened_sequences: screenedRanges([{ simSlot: 0, sequence: screened.sequence }]) });

    const answered = await answerBackfillRequests(device, async (w) => {
      if (!w.sequences) return 0;
      const wanted = inbox.filter((m) => (m.sim_slot ?? null) === w.sequences!.simSlot && w.sequences!.numbers.includes(m.sequence));
      await device.smsMessages.forward({ messages: wanted, sequence_epoch: w.sequences.epoch });
      return wanted.length;
    });
    expect(answered.filter((w) => w.reason === 'sequence_gap').map((w) => w.sequences)).toEqual([{ simSlot: 0, epoch: 'sdk-epoch-1', numbers: [2] }]);
    expect(await completeness(deviceId)).toMatchObject({ verdict: 'complete', highest: 4, screened_count: 1, missing_count: 0 });
  });

  it('screenedRanges joins consecutive numbers per slot', () => {
    expect(
      screenedRanges([
        { simSlot: 0, sequence: 3 },
        { simSlot: 0, sequence: 2 },
        { simSlot: 0, sequence: 5 },
        { simSlot: null, sequence: 1 },
      ]),
    ).toEqual([
      { sim_slot: 0, from: 2, to: 3 },
      { sim_slot: 0, from: 5, to: 5 },
      { sim_slot: null, from: 1, to: 1 },
    ]);
  });
});

describe('device simulator with --sequences', () => {
  it('numbers SMS per SIM, `--miss` leaves a hole the service asks for at once, `backfill` re-sends exactly it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'device-sim-seq-'));
    const state = path.join(dir, 'state.json');
    const sim = async (...argv: string[]) => {
      const out: string[] = [];
      const code = await runSim([...argv, '--state', state], { out: (l) => out.push(l), err: (l) => out.push(l) });
      expect(code, out.join('\n')).toBe(0);
      return out.join('\n');
    };
    try {
      await sim('pair', '--code', await newPairingCode(t, scene.brandId), '--base-url', t.baseUrl, '--name', 'Sequenced phone', '--sequences');
      const deviceId = Number((await t.sql<{ id: string }>('SELECT id FROM devices WHERE uuid = $1', [JSON.parse(readFileSync(state, 'utf8')).deviceId]))[0]!.id);
      const bkash = () => smsBodies.bkash('10.00', newGatewayTrxId(), '01712345515');
      await sim('sms', '--from', 'bKash', '--body', bkash(), '--sim', '0');
      await sim('sms', '--miss', '--from', 'bKash', '--body', bkash(), '--sim', '0');
      await sim('sms', '--from', 'bKash', '--body', 'Your bKash verification code is 123456. Do not share it.', '--sim', '0');
      await sim('sms', '--from', 'bKash', '--body', bkash(), '--sim', '1');
      await sim('sms', '--from', 'bKash', '--body', bkash(), '--sim', '0');
      expect(await completeness(deviceId)).toMatchObject({ verdict: 'missing', missing_count: 1, screened_count: 1, highest: 4 });
      expect(await sim('backfill')).toMatch(/sequence_gap\): re-sent 1 SMS numbered 2/);
      const view = await completeness(deviceId);
      expect(view).toMatchObject({ verdict: 'complete', missing_count: 0, screened_count: 1 });
      expect(view.counters.map((c: { sim_slot: number; highest: number }) => [c.sim_slot, c.highest])).toEqual([
        [0, 4],
        [1, 1],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
