import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FILTER_RULES } from '../../server/domain/filter-rules/defaults.ts';
import { bindDeviceClock } from '../../server/domain/devices/clock.ts';
import { getFilterRules, readFilterRulesToRemember, rememberedFilterRules, rememberedRulesSize, REMEMBERED_RULES_MAX_BYTES, updateFilterRules } from '../../server/domain/filter-rules/service.ts';
import type { StoredSms } from '../../server/domain/sms-intake/matching-seam.ts';
import { ingestScreenedSmsBatch } from '../../server/domain/sms-intake/service.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { countStatements } from '../support/statements.ts';
import { newGatewayTrxId, smsBodies } from '../support/sms-matching.ts';
import { adminRequest } from './admin-support.ts';

/**
 * A forwarded batch is screened with the brand's filter rules as this process
 * last read them (filter-rules/service.ts, rememberedFilterRules), and the
 * records' INSERT proves them current (sms-intake/service.ts, insertRecords):
 * rules changed since, by any writer, are applied to the very next batch; in
 * the steady state the rules cost no round trip, and the phone's clock sample
 * rides with the INSERT.
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

/** The forward path's own read of the rules (filter-rules/service.ts, rulesWithSenders). */
const rulesRead = (texts: string[]) => texts.filter((s) => /^(\+ )?select "r"\."version", "r"\."extra_senders"/.test(s));

describe('rules changed between two forwards apply to the second at once', () => {
  it('a sender newly allowed through the admin API: its SMS, in a batch the old rules keep part of, is stored', async () => {
    const device = await pairDevice(t);
    // Remembered: the brand's rules as they are now, which do not allow ShopBank.
    await forward(device, [plain()]);
    const shop = sms(`You have received Tk 250.00 from 01712345678. Ref ${randomBytes(2).toString('hex')}. TrxID ${newGatewayTrxId()}`, 'ShopBank');
    expect((await forward(device, [shop]))[0]).toMatchObject({ id: null, match_status: 'screened_out', screen_reason: 'sender_not_allowed' });

    const patched = await adminRequest(t, 'PATCH', `/brands/${device.brandId}/filter-rules`, { extra_senders: ['ShopBank'] });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    // The bKash SMS is kept under the remembered rules too, so the batch is inserted with their version: the proof
    // fails, the batch is screened again on the rules read now, and the ShopBank SMS is stored with it.
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

describe('nothing remembered', () => {
  it('a brand\'s first forward reads (and creates) its rules, screens with them and stores what they keep', async () => {
    const { brandId } = await t.createBrand('First Forward Brand');
    const device = await pairDevice(t, { brandId });
    expect(await t.sql('SELECT 1 FROM sms_filter_rules WHERE brand_id = $1', [brandId])).toHaveLength(0);
    const otp = sms('Your bKash verification code is 482913. Never share this code. TrxID ABCDEFGH12');
    const kept = plain();
    let answers: Answer[] = [];
    const counted = await countStatements(async () => {
      answers = await forward(device, [otp, kept]);
    });
    expect(answers[0]).toMatchObject({ id: null, match_status: 'screened_out', screen_reason: 'negative_keyword' });
    expect(answers[1]!.id).not.toBeNull();
    expect(rulesRead(counted.texts).length).toBeGreaterThan(0);
    expect(await t.sql('SELECT 1 FROM sms_filter_rules WHERE brand_id = $1', [brandId])).toHaveLength(1);
    expect(await storedIds(device)).toEqual([kept.device_message_id]);
  });

  it('a batch the remembered rules keep nothing of is screened again on a fresh read before it is answered', async () => {
    const device = await pairDevice(t);
    await forward(device, [plain()]);
    const shop = sms(`You have received Tk 21.00 from 01712345678. TrxID ${newGatewayTrxId()}`, 'ShopTwo');
    await updateFilterRules(t.runtime.deps.db, device.brandId, { extraSenders: ['ShopTwo'] });
    const [answer] = await forward(device, [shop]);
    expect(answer!.id).not.toBeNull();
    expect(answer!.screen_reason).toBeNull();
  });
});

describe('round trips', () => {
  it('the steady state reads no rules, and the clock sample rides with the INSERT', async () => {
    const device = await pairDevice(t);
    // The first forward of the brand reads (and creates) its rules, and the first batch of the process plans
    // after its claim (sms/service.ts, plansAhead): the steady state is from the second forward on.
    await forward(device, [plain()]);
    await forward(device, [plain()]);
    const steady = await countStatements(() => forward(device, [plain()]));
    const withClock = await countStatements(() => forward(device, [plain()], new Date(Date.now() - 60_000)));
    console.log(`statements (round trips): steady ${steady.n} (${steady.trips}), with device_time ${withClock.n} (${withClock.trips})\n  ${steady.texts.join('\n  ')}\n  --\n  ${withClock.texts.join('\n  ')}`);
    // Device auth, then the INSERT carrying the proof: no read of the rules before it.
    expect(rulesRead(steady.texts)).toEqual([]);
    expect(steady.texts[1]).toMatch(/^with "proof"/);
    // The clock sample is one more statement and no more round trip: sent just before the INSERT, which rides with it.
    expect(withClock.n).toBe(steady.n + 1);
    expect(withClock.trips).toBe(steady.trips);
    expect(withClock.texts[1]).toMatch(/^update "devices"/);
    expect(withClock.texts[2]).toMatch(/^\+ with "proof"/);
    expect(rulesRead(withClock.texts)).toEqual([]);
  });

  it('after a change, one batch pays for it: the failed INSERT, a fresh read and the INSERT again; the clock sample is sent once', async () => {
    const device = await pairDevice(t);
    await forward(device, [plain()]);
    const steady = await countStatements(() => forward(device, [plain()]));
    await updateFilterRules(t.runtime.deps.db, device.brandId, { checkIntervalHours: 12 });
    const changed = await countStatements(() => forward(device, [plain()], new Date(Date.now() - 60_000)));
    expect(changed.texts.filter((s) => /update "devices"/.test(s))).toHaveLength(1);
    expect(changed.texts.filter((s) => /with "proof"/.test(s))).toHaveLength(2);
    expect(rulesRead(changed.texts)).toHaveLength(1);
    expect(changed.n).toBe(steady.n + 3);
    expect(changed.trips).toBe(steady.trips + 2);
  });
});

describe('the clock sample with the INSERT', () => {
  it('is stored, and the SMS times of its own batch are corrected with it', async () => {
    const device = await pairDevice(t);
    // Rules remembered, clock never sampled.
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

describe('the INSERT (sms-intake/service.ts, ingestScreenedSmsBatch)', () => {
  const em = () => t.runtime.deps.db;
  const deps = (seen?: Array<ReadonlyMap<number, StoredSms>>) => ({
    cipher: t.runtime.deps.crypto.pii,
    hashKey: t.runtime.deps.crypto.blindIndexKey,
    ...(seen ? { match: async (_em: unknown, _ids: readonly number[], stored?: ReadonlyMap<number, StoredSms>) => void seen.push(stored!) } : {}),
  });
  const input = (receivedAt = new Date()) => ({ deviceMessageId: `dom-${randomBytes(5).toString('hex')}`, sender: 'bKash', body: smsBodies.bkash('23.00', newGatewayTrxId()), receivedAt, simSlot: null });

  it('computes each SMS time with the clock sample sent ahead of it in the same round trip', async () => {
    const device = await pairDevice(t);
    const version = (await getFilterRules(em(), device.brandId)).version;
    const receivedAt = new Date(Date.now() - 180_000);
    const seen: Array<ReadonlyMap<number, StoredSms>> = [];
    const e = em();
    const clock = bindDeviceClock(e, device.deviceId, receivedAt)!;
    const out = await ingestScreenedSmsBatch(e, deps(seen), device, [input(receivedAt)], { rulesVersion: version, ahead: [clock] });
    const smsTime = seen[0]!.get(out![0]!.id)!.smsTime;
    // Uncorrected it would be the phone's receipt time, 3 minutes before the server got it.
    expect(smsTime.getTime() - receivedAt.getTime()).toBeGreaterThan(170_000);
  });

  it('tells a failed proof (null, nothing stored, the clock sample stored all the same) from rows ON CONFLICT refused', async () => {
    const device = await pairDevice(t);
    const version = (await getFilterRules(em(), device.brandId)).version;
    const sms = input();
    const first = await ingestScreenedSmsBatch(em(), deps(), device, [sms], { rulesVersion: version, ahead: [] });
    // The same message again: refused by ON CONFLICT, answered as stored; the proof holds.
    const retry = await ingestScreenedSmsBatch(em(), deps(), device, [sms], { rulesVersion: version, ahead: [] });
    expect(retry![0]!.id).toBe(first![0]!.id);
    // Rules one version older than the brand's: nothing stored, the phone's clock sample ahead of it stored.
    const e = em();
    const stale = await ingestScreenedSmsBatch(e, deps(), device, [input()], { rulesVersion: version - 1, ahead: [bindDeviceClock(e, device.deviceId, new Date(Date.now() - 120_000))!] });
    expect(stale).toBeNull();
    expect(await storedIds(device)).toEqual([sms.deviceMessageId]);
    const [dev] = await t.sql<{ clock_offset_ms: number | null }>('SELECT clock_offset_ms FROM devices WHERE id = $1', [device.deviceId]);
    expect(dev!.clock_offset_ms).toBeLessThan(-100_000);
  });

  it('stores a message id with a lone surrogate as the driver would a text parameter (U+FFFD), not refused by jsonb', async () => {
    const device = await pairDevice(t);
    const sms = { ...input(), deviceMessageId: `odd-${randomBytes(3).toString('hex')}-\ud800` };
    const out = await ingestScreenedSmsBatch(em(), deps(), device, [sms], { rulesVersion: null, ahead: [] });
    expect(out![0]!.id).not.toBeNull();
    expect(await storedIds(device)).toEqual([sms.deviceMessageId.toWellFormed()]);
  });
});

describe('remembered rules are bounded in memory', () => {
  it('beyond REMEMBERED_RULES_MAX_BYTES the least recently used brands are forgotten, and read again when they forward', async () => {
    // Brands with rules near the largest an admin may set (100 entries of up to 64 characters a list).
    const brands = (
      await t.sql<{ id: string }>(`INSERT INTO brands (uuid, name) SELECT gen_random_uuid(), 'Big rules ' || g FROM generate_series(1, 220) g RETURNING id`)
    ).map((r) => Number(r.id));
    await t.sql(
      `INSERT INTO sms_filter_rules (brand_id, extra_senders, positive_keywords, negative_keywords, check_interval_hours)
       SELECT b, (SELECT array_agg('S' || lpad(i::text, 10, '0')) FROM generate_series(1, 100) i),
                 (SELECT array_agg(repeat('p', 58) || lpad(i::text, 6, '0')) FROM generate_series(1, 100) i),
                 (SELECT array_agg(repeat('n', 58) || lpad(i::text, 6, '0')) FROM generate_series(1, 100) i), 24
         FROM unnest($1::bigint[]) b`,
      [brands],
    );
    const em = () => t.runtime.deps.db;
    const first = await readFilterRulesToRemember(em(), brands[0]!);
    expect(first.positiveKeywords).toHaveLength(100);
    expect(rememberedRulesSize(first) * brands.length).toBeGreaterThan(REMEMBERED_RULES_MAX_BYTES);
    for (const id of brands.slice(1)) {
      await readFilterRulesToRemember(em(), id);
      // The first brand keeps forwarding: used last, it is never the one forgotten.
      expect(rememberedFilterRules(em(), brands[0]!)).toBeDefined();
    }
    const kept = brands.filter((id) => rememberedFilterRules(em(), id) !== undefined);
    const held = kept.reduce((n, id) => n + rememberedRulesSize(rememberedFilterRules(em(), id)!), 0);
    expect(held).toBeLessThanOrEqual(REMEMBERED_RULES_MAX_BYTES);
    expect(kept.length).toBeLessThan(brands.length);
    expect(kept).toContain(brands[0]);
    expect(kept).toContain(brands.at(-1));
    // The oldest of the rest went first.
    expect(rememberedFilterRules(em(), brands[1]!)).toBeUndefined();
    // A forgotten brand's rules are read again and remembered.
    await readFilterRulesToRemember(em(), brands[1]!);
    expect(rememberedFilterRules(em(), brands[1]!)?.positiveKeywords).toHaveLength(100);
  });
});
