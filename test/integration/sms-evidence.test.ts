import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { adminRequest } from './admin-support.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedSetting } from '../support/seed.ts';
import { creditTemplate, creditWithBalance, eventsOf, forwardSms, newGatewayTrxId, sendMoneyTemplate, sendMoneyWithBalance, seedPayment, smsBodies, smsRow, smsScene, transactionRow, type SmsScene } from '../support/sms-matching.ts';

/**
 * The matching rules of docs/matching.md through the device API: sender number
 * agreement, the balance chain (forgery, money out, order), the phone's clock
 * offset, typo suggestions, the review threshold and bad input.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off' });
});
afterAll(() => t?.close());

const credit = creditWithBalance;
const sendMoney = sendMoneyWithBalance;

/** A brand with a phone and a bKash gateway whose sender is unique to this test, reading balances. */
async function chainScene(): Promise<SmsScene & { sender: string }> {
  const { brandId, apiKey } = await t.createBrand('Chain Brand');
  const device = await pairDevice(t, { brandId });
  const sender = `bK${newGatewayTrxId('').slice(0, 6)}`;
  const gateway = await seedGateway(t, 'bkash', { sms_senders: [sender], sms_templates: [creditTemplate, sendMoneyTemplate] });
  return { brandId, apiKey, device, gateway, sender };
}

async function claimed(scene: { apiKey: string; gateway: GatewayView }, amount: string, trxId: string, senderNumber?: string) {
  return seedPayment(t, scene as SmsScene, { amount, status: 'awaiting_verification', gatewayTrxId: trxId, ...(senderNumber ? { senderNumber } : {}) });
}

describe('sender number: a payer number that contradicts the customer\'s never completes', () => {
  it('payer A\'s SMS, claimed first by customer B with another number: review (sender_number_mismatch), not completed', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const payment = await createPayment(t, scene.apiKey, { amount: '700.00', currency: 'BDT' });
    // Customer B types A's id on the checkout, with B's own wallet number.
    const res = await t.request('POST', `/api/checkout/v1/payments/${payment.payment_id}/transactions`, {
      body: { gateway: scene.gateway.code, gateway_trx_id: trxId, sender_number: '01912000111' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [{ id }] = await t.sql<{ id: string }>('SELECT id FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]);
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('700.00', trxId, '01712345515') }]);
    expect(answer).toMatchObject({ match_status: 'low_confidence', trx_id: null });
    expect(await smsRow(t, answer!.id)).toMatchObject({ reason_code: 'sender_number_mismatch', candidate_ids: [id], transaction_id: null });
    expect((await transactionRow(t, Number(id))).status).toBe('awaiting_verification');
    expect(await eventsOf(t, Number(id))).toEqual([]);
  });

  it.each([
    ['the same number in another form', '+880 1712-345515', '01712345515'],
    ['a masked SMS number whose visible digits agree', '01712345515', '01XXXXXX515'],
    ['a masked SMS number ***515', '01712345515', '***515'],
  ])('%s: completes', async (_name, declared, inSms) => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await claimed(scene, '710.00', trxId, declared);
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('710.00', trxId, inSms) }]);
    expect(answer).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
  });

  it('a masked SMS number with other visible digits: review', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await claimed(scene, '720.00', trxId, '01712345515');
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('720.00', trxId, '01XXXXXX516') }]);
    expect(answer!.match_status).toBe('low_confidence');
    expect((await smsRow(t, answer!.id)).reason_code).toBe('sender_number_mismatch');
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });

  it('the other order too: a stored SMS naming A, then customer B submits its id with B\'s number on the checkout: not completed', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const [stored] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('730.00', trxId, '01712345515') }]);
    expect(stored!.match_status).toBe('no_candidate');
    const payment = await createPayment(t, scene.apiKey, { amount: '730.00', currency: 'BDT' });
    const res = await t.request('POST', `/api/checkout/v1/payments/${payment.payment_id}/transactions`, {
      body: { gateway: scene.gateway.code, gateway_trx_id: trxId, sender_number: '01912000111' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.status).toBe('awaiting_verification');
    expect(await smsRow(t, stored!.id)).toMatchObject({ match_status: 'low_confidence', reason_code: 'sender_number_mismatch' });
  });
});

describe("sender number: without a declared number, the payment's customer phone counts", () => {
  async function submit(scene: SmsScene, amount: string, trxId: string, customerPhone: string) {
    const payment = await createPayment(t, scene.apiKey, { amount, currency: 'BDT', customer: { name: 'Rahim', phone: customerPhone } });
    const res = await t.request('POST', `/api/checkout/v1/payments/${payment.payment_id}/transactions`, {
      body: { gateway: scene.gateway.code, gateway_trx_id: trxId },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [{ id }] = await t.sql<{ id: string }>('SELECT id FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]);
    return Number(id);
  }

  it("an SMS from another payer than the customer's phone: review (sender_number_mismatch), not completed", async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const id = await submit(scene, '740.00', trxId, '01912000111');
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('740.00', trxId, '01712345515') }]);
    expect(answer).toMatchObject({ match_status: 'low_confidence', trx_id: null });
    expect(await smsRow(t, answer!.id)).toMatchObject({ reason_code: 'sender_number_mismatch', transaction_id: null });
    expect((await transactionRow(t, id)).status).toBe('awaiting_verification');
    expect(await eventsOf(t, id)).toEqual([]);
  });

  it("the SMS first, then the customer submits its id: the customer's phone contradicts it, not completed", async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const [stored] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('750.00', trxId, '01712345515') }]);
    expect(stored!.match_status).toBe('no_candidate');
    const id = await submit(scene, '750.00', trxId, '01912000111');
    expect((await transactionRow(t, id)).status).toBe('awaiting_verification');
    expect(await smsRow(t, stored!.id)).toMatchObject({ match_status: 'low_confidence', reason_code: 'sender_number_mismatch' });
  });

  it("an SMS from the customer's own phone (another form of it): completes", async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const id = await submit(scene, '760.00', trxId, '+8801712345515');
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('760.00', trxId, '01712345515') }]);
    expect(answer!.match_status).toBe('matched');
    expect((await transactionRow(t, id)).status).toBe('completed');
  });
});

describe('balance chain, per phone and wallet', () => {
  it('a forged "received Tk 20,000 ... Balance Tk 1.00" never completes the payment claiming its id', async () => {
    const scene = await chainScene();
    const trxId = newGatewayTrxId();
    const { transaction } = await claimed(scene, '20000.00', trxId);
    const [answer] = await forwardSms(t, scene.device, [{ sender: scene.sender, body: credit('20000.00', trxId, '1.00') }]);
    expect(answer!.match_status).toBe('balance_mismatch');
    expect(await smsRow(t, answer!.id)).toMatchObject({ reason_code: 'balance_impossible', chain_state: 'impossible', parsed_balance: '1.00', candidate_ids: [String(transaction.id)] });
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
    expect(await eventsOf(t, transaction.id)).toEqual([]);
  });

  it('credits and money out follow each other; a credit that does not follow the previous balance is balance_mismatch', async () => {
    const scene = await chainScene();
    const [a, b, c] = [newGatewayTrxId(), newGatewayTrxId(), newGatewayTrxId()];
    const pa = await claimed(scene, '1000.00', a);
    const pb = await claimed(scene, '500.00', b);
    const pc = await claimed(scene, '300.00', c);
    const [first] = await forwardSms(t, scene.device, [{ sender: scene.sender, body: credit('1000.00', a, '6,000.00') }]);
    expect(first!.match_status).toBe('matched');
    expect((await smsRow(t, first!.id)).chain_state).toBe('first');
    // Money out: 6000 - 200 - 5 fee = 5795.
    const [out] = await forwardSms(t, scene.device, [{ sender: scene.sender, body: sendMoney('200.00', '01812345678', '5,795.00') }]);
    expect(out!.match_status).toBe('money_out');
    expect(await smsRow(t, out!.id)).toMatchObject({ direction: 'out', chain_state: 'follows', chain_previous_id: String(first!.id), transaction_id: null, candidate_ids: [] });
    const [second] = await forwardSms(t, scene.device, [{ sender: scene.sender, body: credit('500.00', b, '6,295.00') }]);
    expect(second!.match_status).toBe('matched');
    expect(await smsRow(t, second!.id)).toMatchObject({ chain_state: 'follows', chain_previous_id: String(out!.id) });
    // 6295 + 300 is 6595, not 9999: a forgery (or a missed SMS) - a person looks.
    const [third] = await forwardSms(t, scene.device, [{ sender: scene.sender, body: credit('300.00', c, '9,999.00') }]);
    expect(third!.match_status).toBe('balance_mismatch');
    expect(await smsRow(t, third!.id)).toMatchObject({ reason_code: 'balance_mismatch', chain_state: 'mismatch', chain_expected_balance: '6595.00' });
    expect((await transactionRow(t, pa.transaction.id)).status).toBe('completed');
    expect((await transactionRow(t, pb.transaction.id)).status).toBe('completed');
    expect((await transactionRow(t, pc.transaction.id)).status).toBe('awaiting_verification');

    // The admin sees the chain state, the parsed balance and fee, the direction.
    const view = await adminRequest(t, 'GET', `/sms-records/${third!.id}`);
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({
      match_status: 'balance_mismatch',
      reason_code: 'balance_mismatch',
      direction: 'in',
      kind: 'received',
      parsed_balance: '9999.00',
      parsed_fee: '0.00',
      parsed_sender_number: '********515',
      balance_chain: { state: 'mismatch', previous_id: second!.id, expected_balance: '6595.00' },
      suggestions: [{ transaction_id: pc.transaction.id, why: expect.any(String), distance: 0 }],
    });
    const [head] = await t.sql<{ last_record_id: string; broken: boolean }>('SELECT last_record_id, broken FROM sms_balance_chains WHERE device_id = $1', [scene.device.deviceId]);
    expect(head).toEqual({ last_record_id: String(third!.id), broken: true });
  });

  it('one batch delivered out of order is chained by the SMS times, not by arrival', async () => {
    const scene = await chainScene();
    const [a, b] = [newGatewayTrxId(), newGatewayTrxId()];
    const pa = await claimed(scene, '100.00', a);
    const pb = await claimed(scene, '250.00', b);
    const now = Date.now();
    const answers = await forwardSms(t, scene.device, [
      { sender: scene.sender, body: credit('250.00', b, '1,350.00'), received_at: new Date(now - 1_000).toISOString() },
      { sender: scene.sender, body: credit('100.00', a, '1,100.00'), received_at: new Date(now - 60_000).toISOString() },
    ]);
    expect(answers.map((x) => x.match_status)).toEqual(['matched', 'matched']);
    expect(await smsRow(t, answers[0]!.id)).toMatchObject({ chain_state: 'follows', chain_previous_id: String(answers[1]!.id) });
    expect((await transactionRow(t, pa.transaction.id)).status).toBe('completed');
    expect((await transactionRow(t, pb.transaction.id)).status).toBe('completed');
  });

  it('two SMS of one phone at the same moment that each follow the same balance: the chain forks, only one passes', async () => {
    // SMS times strictly increase across rounds (within the clock grace before the payments).
    const start = Date.now() - 60_000;
    for (let round = 0; round < 8; round++) {
      // A phone of its own each round: the fork leaves a chain untrusted until repaired.
      const scene = await chainScene();
      const [a, b] = [newGatewayTrxId(), newGatewayTrxId()];
      const base = 1000 * (round + 1);
      const now = start + round * 5_000 + 3_000;
      const [seed] = await forwardSms(t, scene.device, [{ sender: scene.sender, body: sendMoney('10.00', '01812345678', `${base}.00`), received_at: new Date(now - 3_000).toISOString() }]);
      expect(seed!.match_status).toBe('money_out');
      const pa = await claimed(scene, '100.00', a);
      const pb = await claimed(scene, '200.00', b);
      // Both claim to follow the seed's balance directly: they cannot both be genuine.
      const [x, y] = await Promise.all([
        forwardSms(t, scene.device, [{ sender: scene.sender, body: credit('100.00', a, `${base + 100}.00`), received_at: new Date(now - 2_000).toISOString() }]),
        forwardSms(t, scene.device, [{ sender: scene.sender, body: credit('200.00', b, `${base + 200}.00`), received_at: new Date(now - 1_000).toISOString() }]),
      ]);
      const statuses = [x[0]!.match_status, y[0]!.match_status];
      expect(statuses.sort(), `round ${round}`).toEqual(['balance_mismatch', 'matched']);
      const completed = [(await transactionRow(t, pa.transaction.id)).status, (await transactionRow(t, pb.transaction.id)).status].filter((st) => st === 'completed');
      expect(completed).toHaveLength(1);
    }
  });

  it('a balance that is not a number: balance_mismatch (balance_unreadable), nothing completes', async () => {
    const scene = await chainScene();
    const trxId = newGatewayTrxId();
    const { transaction } = await claimed(scene, '150.00', trxId);
    const [answer] = await forwardSms(t, scene.device, [{ sender: scene.sender, body: credit('150.00', trxId, 'NaN') }]);
    expect(answer!.match_status).toBe('balance_mismatch');
    expect(await smsRow(t, answer!.id)).toMatchObject({ reason_code: 'balance_unreadable', chain_state: 'unreadable', parsed_balance: null });
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });
});

describe('phone clocks', () => {
  const slow = (ms: number) => new Date(Date.now() - ms).toISOString();

  it('a phone 3 minutes slow: its genuine SMS now completes (the offset from device_time is applied, even without grace)', async () => {
    const scene = await smsScene(t);
    await seedSetting(t, 'match_clock_grace_seconds', 0);
    onTestFinished(() => seedSetting(t, 'match_clock_grace_seconds', 300));
    const trxId = newGatewayTrxId();
    const { transaction } = await claimed(scene, '810.00', trxId);
    // The SMS arrived just now; the phone's clock says 3 minutes ago, before the payment was created.
    const res = await deviceRequest(t, scene.device, 'POST', '/sms/messages', {
      device_time: slow(180_000),
      messages: [{ device_message_id: `slow-${trxId}`, sender: 'bKash', body: smsBodies.bkash('810.00', trxId), received_at: slow(180_000) }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data[0]).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
    const [device] = await t.sql<{ clock_offset_ms: number }>('SELECT clock_offset_ms FROM devices WHERE id = $1', [scene.device.deviceId]);
    expect(device!.clock_offset_ms).toBeGreaterThan(-185_000);
    expect(device!.clock_offset_ms).toBeLessThan(-175_000);
  });

  it('...which went to review before: the same phone without device_time, and no grace', async () => {
    const scene = await smsScene(t);
    await seedSetting(t, 'match_clock_grace_seconds', 0);
    onTestFinished(() => seedSetting(t, 'match_clock_grace_seconds', 300));
    const trxId = newGatewayTrxId();
    const { transaction } = await claimed(scene, '820.00', trxId);
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('820.00', trxId), received_at: slow(180_000) }]);
    expect(answer!.match_status).toBe('low_confidence');
    expect((await smsRow(t, answer!.id)).reason_code).toBe('outside_window');
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });

  it('the default grace (300 s) covers a phone 3 minutes slow whose offset is not known yet', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await claimed(scene, '830.00', trxId);
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('830.00', trxId), received_at: slow(180_000) }]);
    expect(answer).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
  });

  it('the heartbeat reports the phone clock too; the offset is smoothed, a jump replaces it', async () => {
    const device = await pairDevice(t);
    const beat = (offsetMs: number) => deviceRequest(t, device, 'POST', '/devices/heartbeats', { device_time: new Date(Date.now() + offsetMs).toISOString() });
    const offset = async () => (await t.sql<{ clock_offset_ms: number }>('SELECT clock_offset_ms FROM devices WHERE id = $1', [device.deviceId]))[0]!.clock_offset_ms;
    expect((await beat(120_000)).status).toBe(200);
    expect(Math.abs((await offset()) - 120_000)).toBeLessThan(5_000);
    await beat(60_000);
    // 30 % of the way from 120 s to 60 s.
    expect(Math.abs((await offset()) - 102_000)).toBeLessThan(5_000);
    await beat(-3_600_000);
    expect(Math.abs((await offset()) + 3_600_000)).toBeLessThan(5_000);
    // A clock off by more than a day is not a skew: ignored.
    await beat(2 * 86_400_000);
    expect(Math.abs((await offset()) + 3_600_000)).toBeLessThan(5_000);
  });

  it('device_time that is not a timestamp: 400 naming it, nothing stored', async () => {
    const device = await pairDevice(t);
    const hb = await deviceRequest(t, device, 'POST', '/devices/heartbeats', { device_time: 'soon' });
    expect(hb.status).toBe(400);
    expect(hb.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'device_time' });
    const sms = await deviceRequest(t, device, 'POST', '/sms/messages', {
      device_time: 12345,
      messages: [{ device_message_id: 'x', sender: 'bKash', body: 'text', received_at: new Date().toISOString() }],
    });
    expect(sms.status).toBe(400);
    expect(sms.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'device_time' });
    expect((await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records WHERE device_id = $1', [device.deviceId]))[0]!.n).toBe('0');
  });
});

describe('typos and near misses', () => {
  it('nobody claims the SMS\'s id: open payments with its amount are suggested, the likely typo first; nothing completes', async () => {
    const scene = await smsScene(t);
    const trxId = 'BFC2XYZ780';
    const typo = await claimed(scene, '910.00', 'BFC2XYZ78O'); // O for 0
    const far = await claimed(scene, '910.00', newGatewayTrxId('Q'));
    const none = await seedPayment(t, scene, { amount: '910.00' });
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('910.00', trxId) }]);
    expect(answer!.match_status).toBe('low_confidence');
    const view = await adminRequest(t, 'GET', `/sms-records/${answer!.id}`);
    expect(view.body.data).toMatchObject({ reason_code: 'trx_id_unclaimed', candidate_ids: [typo.transaction.id, none.transaction.id, far.transaction.id] });
    expect(view.body.data.suggestions[0]).toEqual({ transaction_id: typo.transaction.id, why: expect.stringContaining('0.5 edit'), distance: 0.5 });
    for (const p of [typo, far, none]) expect(await eventsOf(t, p.transaction.id)).toEqual([]);
  });
});

describe('large amounts', () => {
  it('above the gateway\'s review_above, even certain evidence goes to review', async () => {
    const scene = await smsScene(t);
    const set = await adminRequest(t, 'PATCH', `/gateways/${scene.gateway.code}`, { review_above: '5000.00' });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data.review_above).toBe('5000.00');
    const [big, small] = [newGatewayTrxId(), newGatewayTrxId()];
    const pBig = await claimed(scene, '5000.01', big);
    const pSmall = await claimed(scene, '5000.00', small);
    const answers = await forwardSms(t, scene.device, [
      { sender: 'bKash', body: smsBodies.bkash('5000.01', big) },
      { sender: 'bKash', body: smsBodies.bkash('5000.00', small) },
    ]);
    expect(answers.map((a) => a.match_status)).toEqual(['low_confidence', 'matched']);
    expect((await smsRow(t, answers[0]!.id)).reason_code).toBe('above_review_threshold');
    expect((await transactionRow(t, pBig.transaction.id)).status).toBe('awaiting_verification');
    expect((await transactionRow(t, pSmall.transaction.id)).status).toBe('completed');
  });

  it('review_above must be a positive amount: 400 naming it', async () => {
    const scene = await smsScene(t);
    for (const bad of ['0.00', '-1.00', 'lots', 12]) {
      const res = await adminRequest(t, 'PATCH', `/gateways/${scene.gateway.code}`, { review_above: bad });
      expect(res.status, String(bad)).toBe(400);
      expect(res.body.errors[0].field).toBe('review_above');
    }
  });
});

describe('bad input is stored with a clear status, nothing completes', () => {
  it.each([
    ['no id', (amount: string) => smsBodies.bkash(amount, '').replace('TrxID ', 'TrxID'), 'not_parsed'],
    ['no amount', () => smsBodies.bkash('1.00', newGatewayTrxId()).replace(/Tk [\d,.]+ from/, 'Tk from'), 'not_parsed'],
    ['an absurd amount', () => smsBodies.bkash('99999999999999.00', newGatewayTrxId()), 'not_parsed'],
  ])('%s: no_match', async (_name, body, code) => {
    const scene = await smsScene(t);
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: body('600.00') }]);
    expect(answer!.match_status).toBe('no_match');
    expect((await smsRow(t, answer!.id)).reason_code).toBe(code);
  });

  it('a look-alike sender (zero-width, Cyrillic, punctuation): not an official sender', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await claimed(scene, '640.00', trxId);
    const answers = await forwardSms(t, scene.device, ['bKa\u200bsh', 'bKаsh', 'bKash.'].map((sender) => ({ sender, body: smsBodies.bkash('640.00', trxId) })));
    // The brand's filter rules (only official senders) refuse them before matching; nothing completes either way.
    for (const a of answers) expect(['screened_out', 'no_match']).toContain(a.match_status);
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });
});

describe('the device clock stored with a phone', () => {
  it('a paired phone starts with no offset: its times are used as reported', async () => {
    const device: PairedDevice = await pairDevice(t);
    const [row] = await t.sql<{ clock_offset_ms: number | null }>('SELECT clock_offset_ms FROM devices WHERE id = $1', [device.deviceId]);
    expect(row!.clock_offset_ms).toBeNull();
  });
});
