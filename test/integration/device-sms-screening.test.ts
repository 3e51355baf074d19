import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FILTER_RULES } from '../../server/domain/filter-rules/defaults.ts';
import { updateFilterRules } from '../../server/domain/filter-rules/service.ts';
import { ingestSmsBatch } from '../../server/domain/sms/intake/service.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { newGatewayTrxId, smsBodies } from '../support/sms-matching.ts';
import { adminRequest } from './admin-support.ts';

/**
 * A forwarded batch is screened with the brand's filter rules read for it
 * (sms/intake/screened.ts): rules changed since the last batch, by any writer,
 * are applied to the very next one, and the phone's clock sample corrects the
 * SMS times of its own batch.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off' });
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

type Answer = { device_message_id: string; id: number | null; match_status: string; screen_reason: string | null };
interface Sms {
  device_message_id: string;
  sender: string;
  body: string;
  received_at: string;
}

const sms = (body: string, sender = 'bKash', receivedAt = new Date()): Sms => ({
  device_message_id: `mem-${randomBytes(5).toString('hex')}`,
  sender,
  body,
  received_at: receivedAt.toISOString(),
});
/** A bKash money-received SMS no payment claims: stored and left for review, whatever the matcher makes of it. */
const plain = () => sms(smsBodies.bkash('17.00', newGatewayTrxId()));

async function forward(device: PairedDevice, messages: Sms[], deviceTime?: Date): Promise<Answer[]> {
  const res = await deviceRequest(t, device, 'POST', '/sms/messages', { messages, ...(deviceTime ? { device_time: deviceTime.toISOString() } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

async function storedIds(device: PairedDevice): Promise<string[]> {
  const rows = await t.sql<{ device_message_id: string }>('SELECT device_message_id FROM sms_records WHERE device_id = $1 ORDER BY id', [device.deviceId]);
  return rows.map((r) => r.device_message_id);
}

describe('rules changed between two forwards apply to the second at once', () => {
  it('a sender newly allowed through the admin API: its SMS, in a batch the old rules keep part of, is stored', async () => {
    const device = await pairDevice(t);
    // The brand's rules as they are now do not allow ShopBank.
    await forward(device, [plain()]);
    const shop = sms(`You have received Tk 250.00 from 01712345678. Ref ${randomBytes(2).toString('hex')}. TrxID ${newGatewayTrxId()}`, 'ShopBank');
    expect((await forward(device, [shop]))[0]).toMatchObject({ id: null, match_status: 'screened_out', screen_reason: 'sender_not_allowed' });

    const patched = await adminRequest(t, 'PATCH', `/brands/${device.brandId}/filter-rules`, { extra_senders: ['ShopBank'] });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    // The next batch is screened on the rules read for it: the ShopBank SMS is stored with the bKash one.
    const kept = plain();
    const again = { ...shop, device_message_id: `${shop.device_message_id}-2` };
    const answers = await forward(device, [kept, again]);
    expect(answers.map((a) => a.screen_reason)).toEqual([null, null]);
    expect(answers.every((a) => a.id !== null)).toBe(true);
    expect(await storedIds(device)).toEqual(expect.arrayContaining([kept.device_message_id, again.device_message_id]));
  });

  it('a keyword newly negative (updateFilterRules): the SMS the old rules would keep is screened out and nothing of it stored', async () => {
    const device = await pairDevice(t);
    const first = plain();
    await forward(device, [first]);
    await updateFilterRules(t.runtime.deps.db, device.brandId, { negativeKeywords: [...DEFAULT_FILTER_RULES.negativeKeywords, 'Cashback'] });

    const cashback = sms(`${smsBodies.bkash('18.00', newGatewayTrxId())} Cashback offer`);
    const other = plain();
    const answers = await forward(device, [cashback, other]);
    expect(answers[0]).toMatchObject({ device_message_id: cashback.device_message_id, id: null, match_status: 'screened_out', screen_reason: 'negative_keyword' });
    expect(answers[1]!.id).not.toBeNull();
    expect(await storedIds(device)).toEqual([first.device_message_id, other.device_message_id]);
  });

  it('a gateway\'s new sender (the sender epoch, not the brand\'s rules) is seen by the next forward too', async () => {
    const device = await pairDevice(t);
    await forward(device, [plain()]);
    const sender = `Pay${randomBytes(3).toString('hex')}`;
    await seedGateway(t, 'bkash', { sms_senders: [sender] });
    const fromNew = sms(smsBodies.bkash('19.00', newGatewayTrxId()), sender);
    const answers = await forward(device, [plain(), fromNew]);
    expect(answers[1]).toMatchObject({ screen_reason: null });
    expect(answers[1]!.id).not.toBeNull();
  });
});


describe('the rules read for each batch', () => {
  it('a brand\'s first forward reads (and creates) its rules, screens with them and stores what they keep', async () => {
    const { brandId } = await t.createBrand('First Forward Brand');
    const device = await pairDevice(t, { brandId });
    expect(await t.sql('SELECT 1 FROM sms_filter_rules WHERE brand_id = $1', [brandId])).toHaveLength(0);
    const otp = sms('Your bKash verification code is 482913. Never share this code. TrxID ABCDEFGH12');
    const kept = plain();
    const answers = await forward(device, [otp, kept]);
    expect(answers[0]).toMatchObject({ id: null, match_status: 'screened_out', screen_reason: 'negative_keyword' });
    expect(answers[1]!.id).not.toBeNull();
    expect(await t.sql('SELECT 1 FROM sms_filter_rules WHERE brand_id = $1', [brandId])).toHaveLength(1);
    expect(await storedIds(device)).toEqual([kept.device_message_id]);
  });

  it('a batch the rules of the last batch kept nothing of is screened on the rules as they are now', async () => {
    const device = await pairDevice(t);
    await forward(device, [plain()]);
    const shop = sms(`You have received Tk 21.00 from 01712345678. TrxID ${newGatewayTrxId()}`, 'ShopTwo');
    await updateFilterRules(t.runtime.deps.db, device.brandId, { extraSenders: ['ShopTwo'] });
    const [answer] = await forward(device, [shop]);
    expect(answer!.id).not.toBeNull();
    expect(answer!.screen_reason).toBeNull();
  });
});

describe('the clock sample', () => {
  it('is stored, and the SMS times of its own batch are corrected with it', async () => {
    const device = await pairDevice(t);
    // Clock never sampled.
    await forward(device, [plain()]);
    // The phone's clock is 3 minutes slow: the SMS it says it received 3 minutes ago arrived now.
    const slow = (ms: number) => new Date(Date.now() - ms);
    const message = sms(smsBodies.bkash('22.00', newGatewayTrxId()), 'bKash', slow(180_000));
    const [answer] = await forward(device, [message], slow(180_000));
    const [dev] = await t.sql<{ clock_offset_ms: number }>('SELECT clock_offset_ms FROM devices WHERE id = $1', [device.deviceId]);
    expect(dev!.clock_offset_ms).toBeGreaterThan(-185_000);
    expect(dev!.clock_offset_ms).toBeLessThan(-175_000);
    const [row] = await t.sql<{ sms_time: Date; received_at: Date; server_received_at: Date }>(
      'SELECT sms_time, received_at, server_received_at FROM sms_records WHERE id = $1',
      [answer!.id],
    );
    // Corrected by the offset just sampled (uncorrected, it would be 3 minutes before the server received it).
    expect(row!.sms_time.getTime() - row!.received_at.getTime()).toBe(Math.min(-dev!.clock_offset_ms, row!.server_received_at.getTime() - row!.received_at.getTime()));
    expect(Math.abs(row!.sms_time.getTime() - row!.server_received_at.getTime())).toBeLessThan(5_000);
  });
});

describe('the INSERT (sms/intake/service.ts, ingestSmsBatch)', () => {
  const em = () => t.runtime.deps.db;
  const deps = () => ({ cipher: t.runtime.deps.crypto.pii, hashKey: t.runtime.deps.crypto.blindIndexKey });
  const input = (receivedAt = new Date()) => ({ deviceMessageId: `dom-${randomBytes(5).toString('hex')}`, sender: 'bKash', body: smsBodies.bkash('23.00', newGatewayTrxId()), receivedAt, simSlot: null });

  it('answers a row ON CONFLICT refused (the same message again) as stored', async () => {
    const device = await pairDevice(t);
    const sms = input();
    const first = await ingestSmsBatch(em(), deps(), device, [sms]);
    const retry = await ingestSmsBatch(em(), deps(), device, [sms]);
    expect(retry[0]!.id).toBe(first[0]!.id);
    expect(await storedIds(device)).toEqual([sms.deviceMessageId]);
  });

  it('stores a message id with a lone surrogate as the driver would a text parameter (U+FFFD), not refused by jsonb', async () => {
    const device = await pairDevice(t);
    const sms = { ...input(), deviceMessageId: `odd-${randomBytes(3).toString('hex')}-\ud800` };
    const out = await ingestSmsBatch(em(), deps(), device, [sms]);
    expect(out[0]!.id).not.toBeNull();
    expect(await storedIds(device)).toEqual([sms.deviceMessageId.toWellFormed()]);
  });
});
