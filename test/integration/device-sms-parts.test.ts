import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smsRowBinding } from '../../server/domain/sms/intake/record-cipher.ts';
import { runStalePartsSweep } from '../../server/domain/sms/intake/settle-stale-parts.job.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, type PairedDevice } from '../support/device.ts';
import { newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, transactionRow } from '../support/sms-matching.ts';

let t: TestContext;
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off' });
});
afterAll(() => t?.close());

let seq = 0;
type Part = { reference: number; index: number; count: number };
function part(body: string, p: Part, overrides: Record<string, unknown> = {}) {
  return { device_message_id: `part-${++seq}`, sender: 'bKash', body, received_at: new Date(Date.now() - 60_000 + seq).toISOString(), sim_slot: 0, part: p, ...overrides };
}
const forward = (d: PairedDevice, messages: unknown[]) => deviceRequest(t, d, 'POST', '/sms/messages', { messages });
const records = (deviceId: number) => t.sql<any>('SELECT * FROM sms_records WHERE device_id = $1 ORDER BY id', [deviceId]);
const parts = (deviceId: number) => t.sql<any>('SELECT * FROM sms_parts WHERE device_id = $1 ORDER BY id', [deviceId]);
const bodyOf = (r: any) => t.runtime.deps.crypto.pii.decrypt(r.body_encrypted, 'sms_record.body', smsRowBinding(r));

/** A text split as a phone's header splits it: anywhere, here inside a word. */
function split(text: string, n: number): string[] {
  const size = Math.ceil(text.length / n);
  return Array.from({ length: n }, (_, i) => text.slice(i * size, (i + 1) * size));
}

const TEXT = 'You have received Tk 75.00 cashback on your payment to Merchant Shop. Enjoy more offers with bKash app. Ref 7731.';

describe('long SMS forwarded in parts', () => {
  it('parts in order in one request: joined into one record (no separator), every part answered with it, parts kept only as tombstones', async () => {
    const scene = await smsScene(t);
    const [a, b, c] = split(TEXT, 3);
    const p1 = part(a!, { reference: 41, index: 1, count: 3 });
    const p2 = part(b!, { reference: 41, index: 2, count: 3 });
    const p3 = part(c!, { reference: 41, index: 3, count: 3 });
    const res = await forward(scene.device, [p1, p2, p3]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const ids = res.body.data.map((r: any) => r.id);
    expect(ids[0]).toEqual(expect.any(Number));
    expect(new Set(ids).size).toBe(1);
    expect(res.body.data.map((r: any) => r.device_message_id)).toEqual([p1.device_message_id, p2.device_message_id, p3.device_message_id]);
    expect(res.body.data[0].match_status).not.toBe('awaiting_parts');
    const rows = await records(scene.device.deviceId);
    expect(rows).toHaveLength(1);
    expect(bodyOf(rows[0])).toBe(TEXT);
    expect(rows[0].device_message_id).toBe(`parts:41:3:${p1.device_message_id}`);
    expect(rows[0].received_at.toISOString()).toBe(p1.received_at);
    expect(rows[0].sim_slot).toBe(0);
    const kept = await parts(scene.device.deviceId);
    expect(kept).toHaveLength(3);
    for (const k of kept) expect(k).toMatchObject({ joined_record_id: String(ids[0]), body_encrypted: null, sender: null });
  });

  it('out of order across two requests: the first part waits (id null, nothing parsed), the one that completes the set answers the record', async () => {
    const scene = await smsScene(t);
    const [a, b] = split(TEXT, 2);
    const p2 = part(b!, { reference: 7, index: 2, count: 2 });
    const first = await forward(scene.device, [p2]);
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([{ device_message_id: p2.device_message_id, id: null, match_status: 'awaiting_parts', screen_reason: null, trx_id: null, duplicate_of: null }]);
    expect(await records(scene.device.deviceId)).toHaveLength(0);
    const waiting = await parts(scene.device.deviceId);
    expect(waiting).toHaveLength(1);
    // Encrypted: neither the text nor the sender is readable.
    expect(JSON.stringify(waiting)).not.toContain('bKash');
    expect(JSON.stringify(waiting)).not.toContain(b!.slice(0, 12));

    const p1 = part(a!, { reference: 7, index: 1, count: 2 });
    const second = await forward(scene.device, [p1]);
    expect(second.body.data[0].id).toEqual(expect.any(Number));
    const rows = await records(scene.device.deviceId);
    expect(rows).toHaveLength(1);
    expect(bodyOf(rows[0])).toBe(TEXT);
    // The earliest part's time, whichever came first.
    expect(rows[0].received_at.toISOString()).toBe(p2.received_at);
  });

  it('a part sent again (same id, or another id for the same place) is kept once; a retried part after the join answers the joined record', async () => {
    const scene = await smsScene(t);
    const [a, b] = split(TEXT, 2);
    const p1 = part(a!, { reference: 300, index: 1, count: 2 });
    expect((await forward(scene.device, [p1])).body.data[0].match_status).toBe('awaiting_parts');
    expect((await forward(scene.device, [p1])).body.data[0].match_status).toBe('awaiting_parts');
    expect((await forward(scene.device, [{ ...p1, device_message_id: 'another-id' }])).body.data[0].match_status).toBe('awaiting_parts');
    expect(await parts(scene.device.deviceId)).toHaveLength(1);

    const p2 = part(b!, { reference: 300, index: 2, count: 2 });
    const joined = (await forward(scene.device, [p2])).body.data[0];
    expect(joined.id).toEqual(expect.any(Number));
    const retried = await forward(scene.device, [p1, p2]);
    expect(retried.body.data.map((r: any) => r.id)).toEqual([joined.id, joined.id]);
    expect(await records(scene.device.deviceId)).toHaveLength(1);
  });

  it('the parts of one set in two requests at once: joined exactly once', async () => {
    const scene = await smsScene(t);
    for (let round = 0; round < 5; round++) {
      const [a, b] = split(TEXT.replace('7731', `77${round}`), 2);
      const [r1, r2] = await Promise.all([
        forward(scene.device, [part(a!, { reference: 1000 + round, index: 1, count: 2 })]),
        forward(scene.device, [part(b!, { reference: 1000 + round, index: 2, count: 2 })]),
      ]);
      const answers = [r1.body.data[0], r2.body.data[0]];
      // Whichever came second joined the set; the first waited.
      expect(answers.filter((x: any) => x.match_status === 'awaiting_parts')).toHaveLength(1);
      expect(answers.filter((x: any) => typeof x.id === 'number')).toHaveLength(1);
    }
    expect(await records(scene.device.deviceId)).toHaveLength(5);
    expect((await parts(scene.device.deviceId)).every((p: any) => p.joined_record_id !== null)).toBe(true);
  });

  it('the same reference from another sender (or SIM slot) is another set: nothing joins', async () => {
    const scene = await smsScene(t);
    const [a, b] = split(TEXT, 2);
    const res = await forward(scene.device, [
      part(a!, { reference: 9, index: 1, count: 2 }),
      part(b!, { reference: 9, index: 2, count: 2 }, { sender: 'BKASH' }),
      part(b!, { reference: 9, index: 2, count: 2 }, { sim_slot: 1 }),
    ]);
    expect(res.body.data.map((r: any) => r.match_status)).toEqual(['awaiting_parts', 'awaiting_parts', 'awaiting_parts']);
    expect(await records(scene.device.deviceId)).toHaveLength(0);
    expect(await parts(scene.device.deviceId)).toHaveLength(3);
  });

  it('a real bKash payment SMS in two parts, out of order, completes the payment once joined; its first half alone is never parsed', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '1250.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const body = smsBodies.bkash('1250.00', trxId);
    const cut = body.indexOf(trxId) + 3; // inside the TrxID
    const first = await forward(scene.device, [part(body.slice(0, cut), { reference: 200, index: 1, count: 2 }, { received_at: new Date().toISOString() })]);
    expect(first.body.data[0].match_status).toBe('awaiting_parts');
    expect(await records(scene.device.deviceId)).toHaveLength(0);
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');

    const second = await forward(scene.device, [part(body.slice(cut), { reference: 200, index: 2, count: 2 }, { received_at: new Date().toISOString() })]);
    expect(second.body.data[0]).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    const row = await smsRow(t, second.body.data[0].id);
    expect(row).toMatchObject({ parsed_trx_id: trxId, parsed_amount: '1250.00', reason_code: 'certain_match' });
  });

  it('the filter rules judge the joined text: a one-time code split across parts is refused whole, nothing kept', async () => {
    const scene = await smsScene(t);
    const text = 'Your bKash verification code is 123456. Never share your OTP or PIN with anyone.';
    const [a, b] = split(text, 2);
    const res = await forward(scene.device, [part(a!, { reference: 5, index: 1, count: 2 }), part(b!, { reference: 5, index: 2, count: 2 })]);
    expect(res.body.data.map((r: any) => r.match_status)).toEqual(['screened_out', 'screened_out']);
    expect(res.body.data[0].screen_reason).toBe('negative_keyword');
    expect(await records(scene.device.deviceId)).toHaveLength(0);
    expect(await parts(scene.device.deviceId)).toHaveLength(0);
  });

  it('a set still incomplete after 24 hours: one no_match record (incomplete_parts), never parsed; joined tombstones removed', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '980.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const body = smsBodies.bkash('980.00', trxId);
    const p1 = part(body, { reference: 77, index: 1, count: 3 });
    expect((await forward(scene.device, [p1])).body.data[0].match_status).toBe('awaiting_parts');
    const later = new Date(Date.now() + 25 * 3_600_000);
    const r = await runStalePartsSweep(t.runtime.deps, later);
    expect(r.settled).toBeGreaterThanOrEqual(1);
    const rows = await records(scene.device.deviceId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ match_status: 'no_match', reason_code: 'incomplete_parts', parsed_trx_id: null, transaction_id: null });
    expect(bodyOf(rows[0])).toBe(body);
    expect(await parts(scene.device.deviceId)).toHaveLength(0);
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });
});

describe('bad part header: 400 naming the field, nothing stored', () => {
  it.each([
    ['index above count', { reference: 1, index: 3, count: 2 }, 'messages.0.part.index'],
    ['index 0', { reference: 1, index: 0, count: 2 }, 'messages.0.part.index'],
    ['count 1', { reference: 1, index: 1, count: 1 }, 'messages.0.part.count'],
    ['count 17', { reference: 1, index: 1, count: 17 }, 'messages.0.part.count'],
    ['reference above 65535', { reference: 65536, index: 1, count: 2 }, 'messages.0.part.reference'],
    ['a fractional reference', { reference: 1.5, index: 1, count: 2 }, 'messages.0.part.reference'],
    ['an unknown field', { reference: 1, index: 1, count: 2, iei: 0 }, 'messages.0.part.iei'],
  ])('%s', async (_name, p, field) => {
    const scene = await smsScene(t);
    const res = await forward(scene.device, [part('Tk 10 received', p as Part)]);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors.map((e: any) => e.field)).toContain(field);
    expect(await parts(scene.device.deviceId)).toHaveLength(0);
  });
});
