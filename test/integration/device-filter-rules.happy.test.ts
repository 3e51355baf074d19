import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenSms } from '../../clients/device/sms-filter.ts';
import { updateFilterRules } from '../../server/domain/filter-rules/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { adminRequest } from './admin-support.ts';
import { seedGateway } from '../support/seed.ts';
import { forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsScene } from '../support/sms-matching.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off' });
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const rules = async (d: PairedDevice) => {
  const res = await deviceRequest(t, d, 'GET', '/config/filter-rules');
  expect(res.status).toBe(200);
  return res.body.data;
};
const update = (brandId: number, patch: Parameters<typeof updateFilterRules>[2]) => updateFilterRules(t.runtime.deps.db, brandId, patch);
const admin = (method: string, path: string, body?: unknown) => adminRequest(t, method, path, body);
const code = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;

describe('GET config/filter-rules', () => {
  it('a new brand gets the defaults, stable across reads; the allowed senders are the enabled gateways\' official senders', async () => {
    const d = await pairDevice(t);
    const first = await rules(d);
    expect(Object.keys(first).sort()).toEqual(['allowed_senders', 'check_interval_hours', 'negative_keywords', 'positive_keywords', 'updated_at', 'version']);
    expect(first.version).toBeGreaterThanOrEqual(1);
    expect(first.check_interval_hours).toBe(6);
    const gateways = (await admin('GET', '/gateways')).body.data as Array<{ enabled: boolean; sms_senders: string[] }>;
    const official = gateways.filter((g) => g.enabled).flatMap((g) => g.sms_senders);
    for (const s of official) expect(first.allowed_senders.map((x: string) => x.toLowerCase())).toContain(s.toLowerCase());
    expect(first.negative_keywords).toEqual(expect.arrayContaining(['OTP', 'PIN', 'password', 'verification code', 'ওটিপি', 'পিন', 'পাসওয়ার্ড']));
    expect(first.positive_keywords).toEqual(expect.arrayContaining(['received', 'TrxID']));
    expect(first.updated_at).toMatch(/Z$/);
    expect(await rules(d)).toEqual(first);
  });

  it('every change bumps version by one; an update that changes nothing does not', async () => {
    const d = await pairDevice(t);
    const v1 = await rules(d);
    await update(d.brandId, { extraSenders: ['ShopBank'] });
    const v2 = await rules(d);
    expect(v2.version).toBe(v1.version + 1);
    expect(v2.allowed_senders).toEqual([...v1.allowed_senders, 'ShopBank']);
    expect(Date.parse(v2.updated_at)).toBeGreaterThanOrEqual(Date.parse(v1.updated_at));
    await update(d.brandId, { extraSenders: ['ShopBank'], checkIntervalHours: 6 });
    expect((await rules(d)).version).toBe(v2.version);
    await update(d.brandId, { checkIntervalHours: 12, negativeKeywords: [...v1.negative_keywords, 'secret'] });
    const v3 = await rules(d);
    expect(v3).toMatchObject({ version: v2.version + 1, check_interval_hours: 12 });
    expect(v3.negative_keywords.at(-1)).toBe('secret');
  });

  it('rules are per brand', async () => {
    const a = await pairDevice(t);
    const b = await pairDevice(t);
    const before = (await rules(b)).version;
    await update(a.brandId, { positiveKeywords: ['only-a'] });
    expect((await rules(a)).positive_keywords).toEqual(['only-a']);
    expect((await rules(b)).version).toBe(before);
    expect((await rules(b)).positive_keywords).not.toContain('only-a');
  });

  it('concurrent changes are serialised: no version is lost', async () => {
    const d = await pairDevice(t);
    const v = (await rules(d)).version;
    await Promise.all([update(d.brandId, { checkIntervalHours: 2 }), update(d.brandId, { checkIntervalHours: 3 }), update(d.brandId, { checkIntervalHours: 4 })]);
    expect((await rules(d)).version).toBe(v + 3);
  });

  it('updates are validated and trimmed; duplicates (ignoring case) are dropped; look-alike senders are refused', async () => {
    const d = await pairDevice(t);
    const v = (await rules(d)).version;
    await expect(update(d.brandId, { negativeKeywords: ['OTP', '  '] })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', field: 'negative_keywords.1' });
    await expect(update(d.brandId, { extraSenders: ['x'.repeat(65)] })).rejects.toMatchObject({ field: 'extra_senders.0' });
    await expect(update(d.brandId, { extraSenders: ['ok', 'ｂＫａｓｈ'] })).rejects.toMatchObject({ field: 'extra_senders.1' });
    await expect(update(d.brandId, { checkIntervalHours: 0 })).rejects.toMatchObject({ field: 'check_interval_hours' });
    await expect(update(d.brandId, { checkIntervalHours: 169 })).rejects.toMatchObject({ field: 'check_interval_hours' });
    await expect(update(d.brandId, { positiveKeywords: Array.from({ length: 101 }, (_, i) => `k${i}`) })).rejects.toMatchObject({ field: 'positive_keywords' });
    const saved = await update(d.brandId, { positiveKeywords: [' Received ', 'received', 'TrxID'] });
    expect(saved.positiveKeywords).toEqual(['Received', 'TrxID']);
    // Rejected updates did not bump the version.
    expect(saved.version).toBe(v + 1);
  });
});

describe('filter rules follow the gateways', () => {
  it('a Upay gateway enabled from its preset: its sender reaches the phone with a higher version, its SMS passes the rules and is parsed; disabling it takes the sender away again', async () => {
    const d = await pairDevice(t);
    const before = await rules(d);
    expect(before.allowed_senders.map((s: string) => s.toLowerCase())).not.toContain('upay');

    const gatewayCode = code('upay');
    const created = await admin('POST', '/gateways', { code: gatewayCode, name: 'Upay', type: 'manual', methods: ['send_money'], currencies: ['BDT'], preset: 'upay', enabled: false });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.sms_senders).toEqual(['upay']);
    expect(created.body.data.sms_templates[0]).toMatchObject({ direction: 'in', kind: 'received' });
    // Disabled: nothing changes on the phone.
    expect((await rules(d)).version).toBe(before.version);

    expect((await admin('PATCH', `/gateways/${gatewayCode}`, { enabled: true })).status).toBe(200);
    const after = await rules(d);
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.allowed_senders).toContain('upay');

    const body = 'Tk. 500.00 has been received from 01712345678. Ref-Order42. Balance Tk. 1,500.00. TrxID 01HXYZ7Q at 12/03/2026 14:30.';
    expect(screenSms(after, { sender: 'upay', body })).toEqual({ forward: true });
    const [answer] = await forwardSms(t, d, [{ sender: 'upay', body }]);
    expect(answer!.id).toEqual(expect.any(Number));
    const [row] = await t.sql<{ gateway_id: string | null; parsed_amount: string | null; parsed_trx_id: string | null }>(
      'SELECT gateway_id, parsed_amount, parsed_trx_id FROM sms_records WHERE id = $1',
      [answer!.id],
    );
    expect(row).toMatchObject({ gateway_id: String(created.body.data.id), parsed_amount: '500.00', parsed_trx_id: '01HXYZ7Q' });

    expect((await admin('PATCH', `/gateways/${gatewayCode}`, { enabled: false })).status).toBe(200);
    const disabled = await rules(d);
    expect(disabled.version).toBeGreaterThan(after.version);
    expect(disabled.allowed_senders).not.toContain('upay');
  });

  it('lists the presets; a money-in template that reads a wallet\'s own money-out message is refused with 400 naming it', async () => {
    const presets = await admin('GET', '/gateway-presets');
    expect(presets.status).toBe(200);
    expect(presets.body.data.map((p: { code: string }) => p.code)).toEqual(['bkash', 'nagad', 'rocket', 'upay', 'tap', 'okwallet', 'mcash', 'cellfin', 'pathaopay']);
    expect(presets.body.data[0].senders).toEqual(['bKash']);

    const loose = { pattern: String.raw`(?<amount>\d[\d,]{0,12}\.\d{2})[\s\S]{0,200}TrxID\s+(?<trx_id>[A-Z0-9]{8,12})`, flags: 'i' };
    const refused = await admin('POST', '/gateways', { code: code('loose'), name: 'Loose', type: 'manual', methods: ['send_money'], currencies: ['BDT'], preset: 'bkash', sms_templates: [loose] });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: expect.stringMatching(/^sms_templates\.\d+\.pattern$/) });
    const lookAlike = await admin('POST', '/gateways', { code: code('fw'), name: 'Fw', type: 'manual', methods: ['send_money'], currencies: ['BDT'], sms_senders: ['bKash', 'ｂＫａｓｈ'] });
    expect(lookAlike.status).toBe(400);
    expect(lookAlike.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'sms_senders.1' });
    const unknown = await admin('POST', '/gateways', { code: code('x'), name: 'X', type: 'manual', methods: ['send_money'], currencies: ['BDT'], preset: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].field).toBe('preset');
    // As a money-out template the same regex is accepted, after the preset's own.
    const asOut = await admin('POST', '/gateways', { code: code('out'), name: 'Out', type: 'manual', methods: ['send_money'], currencies: ['BDT'], preset: 'bkash', enabled: false, sms_templates: [{ ...loose, direction: 'out', kind: 'debit' }] });
    expect(asOut.status, JSON.stringify(asOut.body)).toBe(201);
    expect(asOut.body.data.sms_templates.at(-1)).toMatchObject({ direction: 'out', kind: 'debit' });
    // Such a template reads every credit of its sender as money out, and a money-out reading
    // of any gateway wins (docs/matching.md): give it a sender of its own, so the bKash
    // credits below are read as credits again.
    const moved = await admin('PATCH', `/gateways/${asOut.body.data.code}`, { sms_senders: [code('LooseOut')], confirm_regressions: true });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data.sms_senders).not.toContain('bKash');
  });
});

describe('the service screens forwarded SMS again', () => {
  it('an OTP forwarded anyway is answered screened_out and nothing of it is stored', async () => {
    const d = await pairDevice(t);
    const otp = { device_message_id: `otp-${randomBytes(4).toString('hex')}`, sender: 'bKash', body: 'Your bKash verification code is 482913. Never share this code. TrxID ABCDEFGH12' };
    const [answer] = await forwardSms(t, d, [otp]);
    expect(answer).toMatchObject({ id: null, match_status: 'screened_out', screen_reason: 'negative_keyword', trx_id: null, duplicate_of: null });
    const stored = await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records WHERE device_message_id = $1', [otp.device_message_id]);
    expect(stored[0]!.n).toBe('0');
  });

  it('a fullwidth ｂＫａｓｈ is not bKash: the SMS completes nothing, while the same text from bKash does', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    // The payment claims the id: only a claimed id with its amount is ever completed by an SMS (docs/matching.md).
    const { transaction } = await seedPayment(t, scene, { amount: '1250.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const body = smsBodies.bkash('1250.00', trxId);
    const [spoofed] = await forwardSms(t, scene.device, [{ sender: 'ｂＫａｓｈ', body }]);
    expect(spoofed!.match_status).not.toBe('matched');
    const [tx] = await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [transaction.id]);
    expect(tx!.status).not.toBe('completed');
    const [genuine] = await forwardSms(t, scene.device, [{ sender: 'bKash', body }]);
    expect(genuine).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
  });
});
