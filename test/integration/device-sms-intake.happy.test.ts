import { sql } from 'kysely';
import type { Db } from '../../server/domain/db.ts';
import { smsRowBinding } from '../../server/domain/sms/intake/record-cipher.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSmsBatch } from '../../server/domain/sms/intake/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { createGateway } from '../../server/domain/gateways/service.ts';
import { gatewayPresets, seedGateway, seedTransaction } from '../support/seed.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
  // The brand's filter rules allow the senders of the enabled gateways; this one has
  // bKash's and Nagad's but no template, so what is stored here parses as nothing.
  await createGateway(t.runtime.deps.db, { ...gatewayPresets.bkash(), code: 'senders-only', sms_senders: ['bKash', 'NAGAD'], sms_templates: [] });
});
afterAll(() => t?.close());

let seq = 0;
function sms(overrides: Partial<{ device_message_id: string; sender: string; body: string; received_at: string; sim_slot: number | null }> = {}) {
  seq += 1;
  return {
    device_message_id: `msg-${seq}`,
    sender: 'bKash',
    body: `You have received Tk 1,250.00 from 01712345678. Ref ${seq}. Fee Tk 0.00. Balance Tk 5,432.10. TrxID BFC${seq}XYZ789 at 15/03/2024 14:32`,
    received_at: '2026-03-15T08:32:00.000Z',
    sim_slot: 0,
    ...overrides,
  };
}
const forward = (d: PairedDevice, messages: unknown[]) => deviceRequest(t, d, 'POST', '/sms/messages', { messages });
const recordCount = async (brandId: number) => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records WHERE brand_id = $1', [brandId]))[0]!.n);

describe('POST sms/messages', () => {
  // Matching runs on intake; until a test below creates a gateway, no template exists, so new records answer `no_match`.
  it('stores each SMS encrypted and answers each in order', async () => {
    const d = await pairDevice(t);
    const a = sms({ sim_slot: 1 });
    const b = sms({ received_at: '2026-03-15T14:32:00+06:00', sim_slot: null });
    const res = await forward(d, [a, b]);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data[0]).toEqual({ device_message_id: a.device_message_id, id: expect.any(Number), match_status: 'no_match', screen_reason: null, trx_id: null, duplicate_of: null });
    expect(res.body.data[1]).toEqual({ device_message_id: b.device_message_id, id: expect.any(Number), match_status: 'no_match', screen_reason: null, trx_id: null, duplicate_of: null });
    expect(res.body.data[1].id).not.toBe(res.body.data[0].id);

    const rows = await t.sql<any>('SELECT * FROM sms_records WHERE brand_id = $1', [d.brandId]);
    expect(rows).toHaveLength(2);
    const byId = new Map(rows.map((r: any) => [Number(r.id), r]));
    const ra = byId.get(res.body.data[0].id);
    const rb = byId.get(res.body.data[1].id);
    expect(ra).toMatchObject({ device_id: String(d.deviceId), device_message_id: a.device_message_id, sim_slot: 1, match_status: 'no_match', duplicate_of_id: null });
    expect(ra.received_at.toISOString()).toBe('2026-03-15T08:32:00.000Z');
    expect(rb.received_at.toISOString()).toBe('2026-03-15T08:32:00.000Z');
    expect(rb.sim_slot).toBeNull();
    expect(ra.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(ra.server_received_at).toBeInstanceOf(Date);
    // Sender and text only as cipher tokens, readable with the service key, their context and their record's binding.
    expect(JSON.stringify(rows)).not.toContain('received Tk');
    expect(JSON.stringify(rows)).not.toContain('01712345678');
    expect(JSON.stringify(rows)).not.toContain('bKash');
    const binding = smsRowBinding(ra);
    expect(t.runtime.deps.crypto.pii.decrypt(ra.body_encrypted, 'sms_record.body', binding)).toBe(a.body);
    expect(t.runtime.deps.crypto.pii.decrypt(ra.sender, 'sms_record.sender', binding)).toBe('bKash');
  });

  it('the same message id twice in one batch is stored once', async () => {
    const d = await pairDevice(t);
    const m = sms();
    const res = await forward(d, [m, { ...m }]);
    expect(res.status).toBe(200);
    expect(res.body.data[0].id).toBe(res.body.data[1].id);
    expect(res.body.data.map((r: any) => r.match_status)).toEqual(['no_match', 'no_match']);
    expect(await recordCount(d.brandId)).toBe(1);
  });

  it('the same content under another message id in one batch is a duplicate of the first', async () => {
    const d = await pairDevice(t);
    const m = sms();
    const res = await forward(d, [m, { ...m, device_message_id: `${m.device_message_id}-copy` }]);
    const [first, second] = res.body.data;
    expect(first).toMatchObject({ match_status: 'no_match', duplicate_of: null });
    expect(second).toMatchObject({ match_status: 'duplicate', duplicate_of: first.id, trx_id: null });
    expect(second.id).not.toBe(first.id);
    expect(await recordCount(d.brandId)).toBe(2);
  });

  it('re-sending a batch stores nothing new and answers the same records', async () => {
    const d = await pairDevice(t);
    const batch = [sms(), sms()];
    const first = await forward(d, batch);
    const again = await forward(d, batch);
    expect(again.body.data).toEqual(first.body.data);
    expect(await recordCount(d.brandId)).toBe(2);
  });

  it('the same SMS in a later batch under a new id is a duplicate', async () => {
    const d = await pairDevice(t);
    const m = sms();
    const first = await forward(d, [m]);
    const later = await forward(d, [{ ...m, device_message_id: 'other-id', received_at: '2026-03-15T09:00:00Z' }]);
    expect(later.body.data[0]).toMatchObject({ match_status: 'duplicate', duplicate_of: first.body.data[0].id });
  });

  it('the same SMS from another phone of the brand is a duplicate, however the phone cases the sender and breaks lines', async () => {
    const a = await pairDevice(t);
    const b = await pairDevice(t, { brandId: a.brandId });
    const m = sms({ body: 'Money Received.\nAmount: Tk 500.00\nSender: 01712345678\nTxnID: 71A2B3C4' });
    const fromA = await forward(a, [m]);
    const fromB = await forward(b, [{ ...m, sender: 'BKASH', body: 'Money Received.\r\nAmount: Tk 500.00\r\nSender: 01712345678\r\nTxnID: 71A2B3C4\n' }]);
    expect(fromB.body.data[0]).toMatchObject({ match_status: 'duplicate', duplicate_of: fromA.body.data[0].id });
    const [row] = await t.sql<any>('SELECT device_id FROM sms_records WHERE id = $1', [fromB.body.data[0].id]);
    expect(row.device_id).toBe(String(b.deviceId));
  });

  it('is not a duplicate: other text, other sender, or another brand', async () => {
    const a = await pairDevice(t);
    const stranger = await pairDevice(t);
    const m = sms();
    await forward(a, [m]);
    const res = await forward(a, [
      { ...m, device_message_id: 'x1', body: `${m.body}.` },
      { ...m, device_message_id: 'x2', sender: 'NAGAD' },
    ]);
    expect(res.body.data.map((r: any) => r.match_status)).toEqual(['no_match', 'no_match']);
    expect((await forward(stranger, [m])).body.data[0]).toMatchObject({ match_status: 'no_match', duplicate_of: null });
  });

  it('two phones forwarding the same SMS at the same instant store one original', async () => {
    const a = await pairDevice(t);
    const b = await pairDevice(t, { brandId: a.brandId });
    for (let round = 0; round < 5; round++) {
      const batch = [sms(), sms(), sms()];
      // Opposite orders: also shows the two transactions cannot deadlock.
      const [ra, rb] = await Promise.all([forward(a, batch), forward(b, [...batch].reverse())]);
      expect([ra.status, rb.status]).toEqual([200, 200]);
      const answers = [...ra.body.data, ...rb.body.data];
      // Each content: one original, one duplicate pointing at it. (What matching
      // decided for the originals is not this test's subject: a matcher that finds
      // the row locked by the other phone's insert leaves it pending for the sweep.)
      const originals = answers.filter((r: any) => r.duplicate_of === null);
      const duplicates = answers.filter((r: any) => r.duplicate_of !== null);
      expect(originals).toHaveLength(3);
      expect(duplicates.map((r: any) => r.match_status)).toEqual(['duplicate', 'duplicate', 'duplicate']);
      expect(duplicates.map((r: any) => r.duplicate_of).sort()).toEqual(originals.map((r: any) => r.id).sort());
      for (const o of originals) expect(['no_match', 'pending']).toContain(o.match_status);
    }
    const originals = await t.sql<any>('SELECT content_hash, count(*) AS n FROM sms_records WHERE brand_id = $1 AND duplicate_of_id IS NULL GROUP BY content_hash', [a.brandId]);
    expect(originals).toHaveLength(15);
    expect(originals.every((r: any) => r.n === '1')).toBe(true);
  });

  it("answers a matched record's trx_id", async () => {
    const brand = await t.createBrand('Matched');
    const d = await pairDevice(t, { brandId: brand.brandId });
    const gateway = await seedGateway(t, 'bkash');
    const { transaction } = await seedTransaction(t, { apiKey: brand.apiKey, gateway, status: 'completed' });
    const m = sms();
    const first = await forward(d, [m]);
    // What SMS matching will write; intake reports it on the next answer for this record.
    await t.sql("UPDATE sms_records SET match_status = 'matched', transaction_id = $1, matched_at = now() WHERE id = $2", [transaction.id, first.body.data[0].id]);
    const again = await forward(d, [m]);
    expect(again.body.data[0]).toEqual({ device_message_id: m.device_message_id, id: first.body.data[0].id, match_status: 'matched', screen_reason: null, trx_id: transaction.trxId, duplicate_of: null });
  });
});

describe('the matching seam', () => {
  const deps = () => ({ cipher: t.runtime.deps.crypto.pii, hashKey: t.runtime.deps.crypto.blindIndexKey });
  const input = (id: string, body: string) => ({ deviceMessageId: id, sender: 'bKash', body, receivedAt: new Date(), simSlot: null });

  it('is called after storing with the new non-duplicate records only, and its decisions are answered', async () => {
    const d = await pairDevice(t);
    const calls: number[][] = [];
    const match = async (em: Db, ids: number[]) => {
      calls.push(ids);
      await sql`UPDATE sms_records SET match_status = 'no_match' WHERE id = ANY(${ids}::bigint[])`.execute(em);
    };
    const em = t.runtime.deps.db;
    const out = await ingestSmsBatch(em, { ...deps(), match }, d, [input('s1', 'alpha'), input('s2', 'alpha'), input('s3', 'beta')]);
    expect(out.map((r) => r.matchStatus)).toEqual(['no_match', 'duplicate', 'no_match']);
    // In the phone's order (same received_at: the order of the request), not the ids' (content-hash) order.
    expect(calls).toEqual([[out[0]!.id, out[2]!.id]]);
    // A retry has nothing new: the matcher is not called again.
    await ingestSmsBatch(t.runtime.deps.db, { ...deps(), match }, d, [input('s1', 'alpha')]);
    expect(calls).toHaveLength(1);
  });

  it('a failing matcher leaves the records pending and the batch succeeds', async () => {
    const d = await pairDevice(t);
    const errors: unknown[] = [];
    const out = await ingestSmsBatch(
      t.runtime.deps.db,
      { ...deps(), match: async () => Promise.reject(new Error('matcher down')), onMatchError: (e) => errors.push(e) },
      d,
      [input('f1', 'gamma')],
    );
    expect(out[0]!.matchStatus).toBe('pending');
    expect((errors[0] as Error).message).toBe('matcher down');
    expect(await recordCount(d.brandId)).toBe(1);
  });
});
