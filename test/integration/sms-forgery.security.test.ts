import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayInput, GatewayView } from '../../server/domain/gateways/service.ts';
import { adminRequest } from './admin-support.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { GATEWAY_PRESETS, presetTemplates } from '../../server/domain/sms/templates/presets/index.ts';
import {
  creditTemplate,
  creditWithBalance,
  forwardSms,
  newGatewayTrxId,
  sendMoneyTemplate,
  sendMoneyWithBalance,
  seedPayment,
  smsRow,
  transactionRow,
  bdNow,
  type OutgoingSms,
  type SmsScene,
} from '../support/sms-matching.ts';

/**
 * Forged SMS that completed payments before (an outside red-team run of
 * real-format wallet SMS), black-box through the device API: each case must
 * now leave the payment for a person. docs/matching.md says why, rule by rule.
 * Every scene has senders of its own, so its balance chains meet no other test's.
 */

let t: TestContext;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

/** bKash's money-received wording without a balance (its older form), as the preset reads it. */
const noBalanceTemplate = {
  pattern: String.raw`^\s*You\s+have\s+received\s+(?:tk\.?|৳)\s*(?<amount>\d[\d,]*(?:\.\d{1,2})?)\s+from\s+(?<sender_number>\+?[\dx*]{6,15})\.[\s\S]*?\bTrxID\s*:?\s*(?<trx_id>[a-z0-9]{8,12})\b`,
  flags: 'i',
  kind: 'received',
};
const noBalance = (amount: string, trxId: string, from = '01712345515') => `You have received Tk ${amount} from ${from}. Ref gift. TrxID ${trxId} at 15/03/2024 14:32`;

interface Scene extends SmsScene {
  sender: string;
  senders: string[];
}

const uniqueSender = () => `bK${newGatewayTrxId('').slice(0, 6)}`;

async function scene(opts: { senders?: string[]; reviewAbove?: string | null; templates?: GatewayInput['sms_templates'] } = {}): Promise<Scene> {
  const { brandId, apiKey } = await t.createBrand('Forgery Brand');
  const device = await pairDevice(t, { brandId });
  const senders = opts.senders ?? [uniqueSender()];
  const gateway = await seedGateway(t, 'bkash', {
    sms_senders: senders,
    sms_templates: opts.templates ?? [creditTemplate, noBalanceTemplate, sendMoneyTemplate],
    review_above: opts.reviewAbove ?? null,
  });
  return { brandId, apiKey, device, gateway, sender: senders[0]!, senders };
}

async function claim(s: SmsScene, amount: string, trxId: string | null, opts: { senderNumber?: string; gateway?: GatewayView } = {}) {
  return seedPayment(t, { ...s, gateway: opts.gateway ?? s.gateway }, { amount, status: trxId === null ? 'pending' : 'awaiting_verification', gatewayTrxId: trxId, ...(opts.senderNumber ? { senderNumber: opts.senderNumber } : {}) });
}

const secondsAgo = (s: number) => new Date(Date.now() - s * 1000).toISOString();

/** A genuine first link of the chain: a credit that completes its own payment. */
async function genuineStart(s: Scene, balance = '1,100.00') {
  const trx = newGatewayTrxId();
  const p = await claim(s, '100.00', trx);
  const [a] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('100.00', trx, balance), received_at: secondsAgo(50) }]);
  expect(a!.match_status).toBe('matched');
  return p;
}

describe('a chain that broke stays untrusted', () => {
  it('a second forgery that follows the first does not complete (separate requests)', async () => {
    const s = await scene();
    await genuineStart(s);
    const [x1, x2] = [newGatewayTrxId(), newGatewayTrxId()];
    const p1 = await claim(s, '500.00', x1);
    const p2 = await claim(s, '700.00', x2);
    const [f1] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('500.00', x1, '9,999.00'), received_at: secondsAgo(40) }]);
    expect(f1!.match_status).toBe('balance_mismatch');
    // Follows the first forgery exactly: it proves nothing.
    const [f2] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('700.00', x2, '10,699.00'), received_at: secondsAgo(30) }]);
    expect(f2!.match_status).toBe('balance_mismatch');
    expect(await smsRow(t, f2!.id)).toMatchObject({ chain_state: 'after_break', reason_code: 'balance_after_break' });
    expect((await transactionRow(t, p1.transaction.id)).status).toBe('awaiting_verification');
    expect((await transactionRow(t, p2.transaction.id)).status).toBe('awaiting_verification');
  });

  it('...nor when both come in one request', async () => {
    const s = await scene();
    await genuineStart(s);
    const [x1, x2] = [newGatewayTrxId(), newGatewayTrxId()];
    const p1 = await claim(s, '500.00', x1);
    const p2 = await claim(s, '700.00', x2);
    const answers = await forwardSms(t, s.device, [
      { sender: s.sender, body: creditWithBalance('500.00', x1, '9,999.00'), received_at: secondsAgo(40) },
      { sender: s.sender, body: creditWithBalance('700.00', x2, '10,699.00'), received_at: secondsAgo(30) },
    ]);
    expect(answers.map((a) => a.match_status)).toEqual(['balance_mismatch', 'balance_mismatch']);
    expect((await transactionRow(t, p1.transaction.id)).status).toBe('awaiting_verification');
    expect((await transactionRow(t, p2.transaction.id)).status).toBe('awaiting_verification');
  });

  it('a money-out SMS after a break does not reset it: the next forged credit still goes to review', async () => {
    const s = await scene();
    await genuineStart(s);
    const [x1, x3] = [newGatewayTrxId(), newGatewayTrxId()];
    await claim(s, '500.00', x1);
    const p3 = await claim(s, '300.00', x3);
    const [f1] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('500.00', x1, '9,999.00'), received_at: secondsAgo(40) }]);
    expect(f1!.match_status).toBe('balance_mismatch');
    const [out] = await forwardSms(t, s.device, [{ sender: s.sender, body: sendMoneyWithBalance('100.00', '01812345678', '9,894.00'), received_at: secondsAgo(35) }]);
    expect(out!.match_status).toBe('money_out');
    expect((await smsRow(t, out!.id)).chain_state).toBe('after_break');
    const [f3] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('300.00', x3, '10,194.00'), received_at: secondsAgo(30) }]);
    expect(f3!.match_status).toBe('balance_mismatch');
    expect((await transactionRow(t, p3.transaction.id)).status).toBe('awaiting_verification');
  });

  it('an operator who verifies an SMS of the chain makes it trusted again from there', async () => {
    const s = await scene();
    await genuineStart(s);
    const x1 = newGatewayTrxId();
    const p1 = await claim(s, '500.00', x1);
    const [f1] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('500.00', x1, '2,000.00'), received_at: secondsAgo(40) }]);
    expect(f1!.match_status).toBe('balance_mismatch');
    // A person checked the wallet: the SMS is genuine (an SMS before it was missed).
    const verified = await adminRequest(t, 'POST', `/transactions/${p1.transaction.id}/verifications`, { sms_record_id: f1!.id, note: 'checked the wallet statement' });
    expect(verified.status, JSON.stringify(verified.body)).toBeLessThan(300);
    const x2 = newGatewayTrxId();
    const p2 = await claim(s, '250.00', x2);
    const [next] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('250.00', x2, '2,250.00'), received_at: secondsAgo(30) }]);
    expect(next!.match_status).toBe('matched');
    expect((await transactionRow(t, p2.transaction.id)).status).toBe('completed');
  });
});

describe('balances the wallet always prints', () => {
  it('a credit without a balance on a chain that carries balances goes to review (balance_missing)', async () => {
    const s = await scene();
    await genuineStart(s);
    const x = newGatewayTrxId();
    const p = await claim(s, '500.00', x);
    const [f] = await forwardSms(t, s.device, [{ sender: s.sender, body: noBalance('500.00', x), received_at: secondsAgo(30) }]);
    expect(f!.match_status).toBe('balance_mismatch');
    expect(await smsRow(t, f!.id)).toMatchObject({ chain_state: 'missing', reason_code: 'balance_missing' });
    expect((await transactionRow(t, p.transaction.id)).status).toBe('awaiting_verification');
  });

  it('a balance the template cannot read goes to review (balance_unreadable)', async () => {
    const s = await scene();
    await genuineStart(s);
    const x = newGatewayTrxId();
    const p = await claim(s, '500.00', x);
    const [f] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('500.00', x, '1,6OO.OO'), received_at: secondsAgo(30) }]);
    expect(f!.match_status).toBe('balance_mismatch');
    expect((await transactionRow(t, p.transaction.id)).status).toBe('awaiting_verification');
  });

  it("a forgery through the wallet's second official sender meets the same chain", async () => {
    const s = await scene({ senders: [uniqueSender(), String(10_000 + Math.floor(Math.random() * 80_000))] });
    await genuineStart(s);
    const x = newGatewayTrxId();
    const p = await claim(s, '500.00', x);
    const [f] = await forwardSms(t, s.device, [{ sender: s.senders[1]!, body: creditWithBalance('500.00', x, '9,999.00'), received_at: secondsAgo(30) }]);
    expect(f!.match_status).toBe('balance_mismatch');
    expect((await transactionRow(t, p.transaction.id)).status).toBe('awaiting_verification');
  });
});

describe('what a message is, read as it is', () => {
  it('a debit that states no balance (bill pay) keeps the chain: the next credit follows it', async () => {
    const bkash = GATEWAY_PRESETS.find((p) => p.code === 'bkash')!;
    const billPay = presetTemplates(bkash).find((x) => x.kind === 'bill_pay')!;
    const s = await scene({ templates: [creditTemplate, billPay] });
    const { device, sender } = s;
    await genuineStart(s);
    const [bill] = await forwardSms(t, device, [
      { sender, body: `Bill successfully paid.\nBiller: PALLI BIDYUT\nAccount: 1234567\nAmount: Tk 485.00\nFee: Tk 0.00\nTrxID: ${newGatewayTrxId('P')} at ${bdNow('dmy')}`, received_at: secondsAgo(40) },
    ]);
    expect(bill!.match_status).toBe('money_out');
    expect(await smsRow(t, bill!.id)).toMatchObject({ chain_state: 'follows' });
    const x = newGatewayTrxId();
    const p = await claim(s, '500.00', x);
    // 1,100.00 - 485.00 + 500.00
    const [next] = await forwardSms(t, device, [{ sender, body: creditWithBalance('500.00', x, '1,115.00'), received_at: secondsAgo(30) }]);
    expect(next!.match_status).toBe('matched');
    expect((await transactionRow(t, p.transaction.id)).status).toBe('completed');
  });
});

describe('a cashback is read as what it is', () => {
  it('it keeps the chain (the next credit follows it) and pays nothing', async () => {
    const bkash = GATEWAY_PRESETS.find((p) => p.code === 'bkash')!;
    const s = await scene({ templates: [creditTemplate, ...presetTemplates(bkash)] });
    const { device, sender } = s;
    await genuineStart(s);
    const cashbackId = newGatewayTrxId();
    // Someone claims the cashback's id with its amount: a cashback still pays nothing.
    const claimer = await claim(s, '50.00', cashbackId);
    const [cashback] = await forwardSms(t, device, [
      { sender, body: `Congratulations! You have received Cashback Tk 50.00. Balance Tk 1,150.00. TrxID ${cashbackId} at ${bdNow('dmy')}. Cashback on bkash transaction`, received_at: secondsAgo(40) },
    ]);
    expect(cashback!.match_status).toBe('no_match');
    expect(await smsRow(t, cashback!.id)).toMatchObject({ reason_code: 'not_a_payment', kind: 'cashback', chain_state: 'follows' });
    expect((await transactionRow(t, claimer.transaction.id)).status).toBe('awaiting_verification');
    const x = newGatewayTrxId();
    const p = await claim(s, '500.00', x);
    const [next] = await forwardSms(t, device, [{ sender, body: creditWithBalance('500.00', x, '1,650.00'), received_at: secondsAgo(30) }]);
    expect(next!.match_status).toBe('matched');
    expect((await transactionRow(t, p.transaction.id)).status).toBe('completed');
  });
});

describe('a trx id that failed once', () => {
  it('is review when retried without the balance, on another phone of the brand', async () => {
    const s = await scene();
    await genuineStart(s);
    const x = newGatewayTrxId();
    const p = await claim(s, '500.00', x);
    const [f] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('500.00', x, '9,999.00'), received_at: secondsAgo(40) }]);
    expect(f!.match_status).toBe('balance_mismatch');
    // A phone with no chain yet: no balance is expected of it.
    const other = await pairDevice(t, { brandId: s.brandId });
    const [retry] = await forwardSms(t, other, [{ sender: s.sender, body: noBalance('500.00', x), received_at: secondsAgo(30) }]);
    expect(retry!.match_status).toBe('low_confidence');
    expect((await smsRow(t, retry!.id)).reason_code).toBe('trx_id_contradicted');
    expect((await transactionRow(t, p.transaction.id)).status).toBe('awaiting_verification');
  });

  it('...also when the retry comes first and the claim after it', async () => {
    const s = await scene();
    await genuineStart(s);
    const x = newGatewayTrxId();
    const [f] = await forwardSms(t, s.device, [{ sender: s.sender, body: creditWithBalance('500.00', x, '9,999.00'), received_at: secondsAgo(40) }]);
    expect(f!.match_status).toBe('balance_mismatch');
    const other = await pairDevice(t, { brandId: s.brandId });
    const [retry] = await forwardSms(t, other, [{ sender: s.sender, body: noBalance('500.00', x), received_at: secondsAgo(30) }]);
    expect(['no_candidate', 'low_confidence']).toContain(retry!.match_status);
    // The customer types the id on the checkout, which looks for stored SMS that prove it.
    const payment = await createPayment(t, s.apiKey, { amount: '500.00', currency: 'BDT' });
    const res = await t.request('POST', `/api/checkout/v1/payments/${payment.payment_id}/transactions`, { body: { gateway: s.gateway.code, gateway_trx_id: x } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [row] = await t.sql<{ status: string }>('SELECT status FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]);
    expect(row!.status).toBe('awaiting_verification');
  });
});

describe('front-running a known trx id', () => {
  it("a claimer naming no payer does not win when the SMS's payer is another open payment's customer", async () => {
    const s = await scene();
    const x = newGatewayTrxId();
    // The real payer's payment: open, its customer declared the wallet number the SMS will name.
    const real = await claim(s, '500.00', null, { senderNumber: '01712345515' });
    // Someone else claims the id first, naming no number, on a payment with no customer phone.
    const front = await claim(s, '500.00', x);
    const [a] = await forwardSms(t, s.device, [{ sender: s.sender, body: noBalance('500.00', x, '01712345515'), received_at: secondsAgo(5) }]);
    expect(a!.match_status).toBe('low_confidence');
    const row = await smsRow(t, a!.id);
    expect(row.reason_code).toBe('payer_is_another_customer');
    expect(row.candidate_ids).toEqual(expect.arrayContaining([String(front.transaction.id), String(real.transaction.id)]));
    expect((await transactionRow(t, front.transaction.id)).status).toBe('awaiting_verification');
  });

  it('...also when the SMS came first and the id is claimed after it', async () => {
    const s = await scene();
    const x = newGatewayTrxId();
    const real = await claim(s, '500.00', null, { senderNumber: '01712345515' });
    const [a] = await forwardSms(t, s.device, [{ sender: s.sender, body: noBalance('500.00', x, '01712345515'), received_at: secondsAgo(5) }]);
    expect(a!.match_status).toBe('low_confidence');
    // Someone who saw the id types it on a payment of their own, naming no number.
    const payment = await createPayment(t, s.apiKey, { amount: '500.00', currency: 'BDT' });
    const res = await t.request('POST', `/api/checkout/v1/payments/${payment.payment_id}/transactions`, { body: { gateway: s.gateway.code, gateway_trx_id: x } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [row] = await t.sql<{ status: string }>('SELECT status FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]);
    expect(row!.status).toBe('awaiting_verification');
    expect((await smsRow(t, a!.id)).reason_code).toBe('payer_is_another_customer');
    expect((await transactionRow(t, real.transaction.id)).status).toBe('pending');
  });

  it('...and does win when no other open payment is that payer\'s', async () => {
    const s = await scene();
    const x = newGatewayTrxId();
    await claim(s, '500.00', null, { senderNumber: '01812000111' });
    const claimer = await claim(s, '500.00', x);
    const [a] = await forwardSms(t, s.device, [{ sender: s.sender, body: noBalance('500.00', x, '01712345515'), received_at: secondsAgo(5) }]);
    expect(a!.match_status).toBe('matched');
    expect((await transactionRow(t, claimer.transaction.id)).status).toBe('completed');
  });
});


describe('the time the SMS states in its text', () => {
  // bKash's own wording, read by its preset (which reads the time after "at").
  const bkash = (amount: string, trxId: string, balance: string, at: Date) =>
    `You have received Tk ${amount} from 01712345515. Ref 7. Fee Tk 0.00. Balance Tk ${balance}. TrxID ${trxId} at ${bdNow('dmy', at)}`;

  it('an SMS the wallet dated before the payment existed does not complete it, whenever the phone received it', async () => {
    const { brandId, apiKey } = await t.createBrand('Dated Brand');
    const device = await pairDevice(t, { brandId });
    const gateway = await seedGateway(t, 'bkash', { sms_senders: [uniqueSender()] });
    const s = { brandId, apiKey, device, gateway };
    const [old, fresh] = [newGatewayTrxId(), newGatewayTrxId()];
    const p1 = await claim(s, '500.00', old);
    const p2 = await claim(s, '300.00', fresh);
    const answers = await forwardSms(t, device, [
      // Yesterday's message (a replay of an earlier payment's SMS), arriving now.
      { sender: gateway.smsSenders[0]!, body: bkash('500.00', old, '1,500.00', new Date(Date.now() - 86_400_000)), received_at: secondsAgo(3) },
      { sender: gateway.smsSenders[0]!, body: bkash('300.00', fresh, '1,800.00', new Date()), received_at: secondsAgo(2) },
    ]);
    expect(answers[0]!.match_status).toBe('low_confidence');
    expect((await smsRow(t, answers[0]!.id)).reason_code).toBe('dated_before_payment');
    expect((await transactionRow(t, p1.transaction.id)).status).toBe('awaiting_verification');
    // Today's, the same minute as its payment: it completes.
    expect(answers[1]!.match_status).toBe('matched');
    expect((await transactionRow(t, p2.transaction.id)).status).toBe('completed');
  });
});

describe("a gateway's review threshold stays its own", () => {
  it('a payment on a gateway without one completes, though another gateway of the sender has one', async () => {
    const s = await scene({ reviewAbove: '100.00' });
    const other = await seedGateway(t, 'bkash', { sms_senders: s.senders, sms_templates: [creditTemplate, noBalanceTemplate], review_above: null });
    const [x, y] = [newGatewayTrxId(), newGatewayTrxId()];
    const free = await claim(s, '500.00', x, { gateway: other });
    const held = await claim(s, '500.00', y);
    const answers = await forwardSms(t, s.device, [
      { sender: s.sender, body: noBalance('500.00', x), received_at: secondsAgo(6) },
      { sender: s.sender, body: noBalance('500.00', y), received_at: secondsAgo(5) },
    ]);
    expect(answers.map((a) => a.match_status)).toEqual(['matched', 'low_confidence']);
    expect((await smsRow(t, answers[1]!.id)).reason_code).toBe('above_review_threshold');
    expect((await transactionRow(t, free.transaction.id)).status).toBe('completed');
    expect((await transactionRow(t, held.transaction.id)).status).toBe('awaiting_verification');
  });
});

describe("the phone's order", () => {
  async function tiedBatch(s: Scene, device: PairedDevice, start: number, receivedAt: (i: number) => string, deviceTime?: string) {
    const amounts = ['100.00', '200.00', '300.00', '400.00'];
    let balance = start;
    const payments = [];
    const messages = [];
    for (const [i, amount] of amounts.entries()) {
      const trx = newGatewayTrxId();
      payments.push(await claim(s, amount, trx));
      balance += Number(amount);
      messages.push({ device_message_id: `tie-${trx}`, sender: s.sender, body: creditWithBalance(amount, trx, `${balance}.00`), received_at: receivedAt(i) });
    }
    const res = await deviceRequest(t, device, 'POST', '/sms/messages', { messages, ...(deviceTime ? { device_time: deviceTime } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { statuses: res.body.data.map((d: { match_status: string }) => d.match_status), end: balance };
  }

  it('genuine SMS of one request with the same time chain in the order the phone sent them', async () => {
    const s = await scene();
    const at = secondsAgo(20);
    let balance = 1000;
    for (let round = 0; round < 3; round++) {
      const { statuses, end } = await tiedBatch(s, s.device, balance, () => at);
      expect(statuses, `round ${round}`).toEqual(['matched', 'matched', 'matched', 'matched']);
      balance = end;
    }
  });

  it('...and when a fast clock caps them all at the moment the server received them', async () => {
    const s = await scene();
    const ahead = Date.now() + 3_600_000;
    const { statuses } = await tiedBatch(s, s.device, 1000, (i) => new Date(ahead + i * 1000).toISOString(), new Date(ahead + 10_000).toISOString());
    expect(statuses).toEqual(['matched', 'matched', 'matched', 'matched']);
  });
});

describe('property: look-alike senders never complete anything', () => {
  // Unicode spaces, format and bidi characters that String.prototype.trim or a folding would remove.
  const invisible = ['\ufeff', '\u00a0', '\u3000', '\u2028', '\u2029', '\u2000', '\u200a', '\u1680', '\u200b', '\u200c', '\u200d', '\u2060', '\u202e', '\u2066', '\u061c', '\u180e', ' '];
  it('the official sender with any of them before, after or inside is not the sender', async () => {
    const s = await scene({ senders: ['bKash'] });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...invisible), { maxLength: 2 }),
        fc.array(fc.constantFrom(...invisible), { maxLength: 2 }),
        fc.constantFrom('bKash', 'BKASH', 'bkash'),
        async (before, after, name) => {
          fc.pre(before.length + after.length > 0);
          const x = newGatewayTrxId();
          const p = await claim(s, '50.00', x);
          const [a] = await forwardSms(t, s.device, [{ sender: `${before.join('')}${name}${after.join('')}`, body: noBalance('50.00', x), received_at: secondsAgo(2) }]);
          expect(['screened_out', 'no_match']).toContain(a!.match_status);
          expect((await transactionRow(t, p.transaction.id)).status).toBe('awaiting_verification');
        },
      ),
      { numRuns: 25 },
    );
  });
});

/** Forwards `messages` in order, as consecutive requests: a request ends after message i when `cuts[i]` says so. */
async function forwardInRequests(device: PairedDevice, messages: OutgoingSms[], cuts: readonly boolean[]) {
  let request: OutgoingSms[] = [];
  for (const [i, m] of messages.entries()) {
    request.push(m);
    if (i === messages.length - 1 || cuts[i % cuts.length]) {
      await forwardSms(t, device, request);
      request = [];
    }
  }
}

describe('a pasted SMS: the sender as typed is evidence too', () => {
  it.each(['\ufeffbKash', 'bKash\ufeff', '\u00a0bKash', '\u3000bKash\u2028', '\u2000bKash', '\u1680bKash', ' bKash'])('%j completes nothing and is stored as given', async (sender) => {
    const s = await scene({ senders: ['bKash'] });
    const x = newGatewayTrxId();
    const p = await claim(s, '60.00', x);
    const res = await adminRequest(t, 'POST', '/sms-records', { device_id: s.device.deviceId, sender, body: noBalance('60.00', x), received_at: secondsAgo(2) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ match_status: 'no_match', sender });
    expect((await transactionRow(t, p.transaction.id)).status).toBe('awaiting_verification');
  });
});

describe('property: forged credits after a break, however they are split into requests', () => {
  it('never complete', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 4 }), fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), fc.integer({ min: 1, max: 50_000 }), async (n, cuts, offset) => {
        const s = await scene();
        await genuineStart(s);
        // The first forgery breaks the chain; every later one follows the one before it exactly.
        let balance = 1100 + offset;
        const forged = [];
        for (let i = 0; i < n; i++) {
          const x = newGatewayTrxId();
          const p = await claim(s, '250.00', x);
          balance += 250;
          forged.push({ p, sms: { sender: s.sender, body: creditWithBalance('250.00', x, `${balance}.00`), received_at: secondsAgo(40 - i) } });
        }
        await forwardInRequests(s.device, forged.map((f) => f.sms), cuts);
        for (const f of forged) expect((await transactionRow(t, f.p.transaction.id)).status).toBe('awaiting_verification');
      }),
      { numRuns: 8 },
    );
  });
});

describe('property: genuine SMS sent in the phone order complete, however split into requests and whatever times tie', () => {
  it('every one completes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 20, max: 900 }), { minLength: 2, maxLength: 5 }),
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        async (amounts, cuts, ties) => {
          const s = await scene();
          let balance = 1000;
          let second = 60;
          const sent = [];
          for (const [i, whole] of amounts.entries()) {
            const amount = `${whole}.00`;
            const x = newGatewayTrxId();
            const p = await claim(s, amount, x);
            balance += whole;
            // A tie: the same whole-second time as the SMS before it.
            if (i === 0 || !ties[i % ties.length]) second -= 2;
            sent.push({ p, sms: { sender: s.sender, body: creditWithBalance(amount, x, `${balance}.00`), received_at: secondsAgo(second) } });
          }
          await forwardInRequests(s.device, sent.map((m) => m.sms), cuts);
          for (const m of sent) expect((await transactionRow(t, m.p.transaction.id)).status).toBe('completed');
        },
      ),
      { numRuns: 8 },
    );
  });
});

describe('property: on a chain with balances, a forged credit never completes, whatever sender id of the wallet and with or without a balance', () => {
  it('never completes', async () => {
    const senders = [uniqueSender(), String(20_000 + Math.floor(Math.random() * 70_000)), uniqueSender()];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 1, 2), fc.constantFrom('none', 'wrong'), fc.integer({ min: 1, max: 9_000 }), async (via, balance, off) => {
        const s = await scene({ senders });
        await genuineStart(s, `${(1100 + off).toLocaleString('en-US')}.00`);
        const x = newGatewayTrxId();
        const p = await claim(s, '300.00', x);
        const body = balance === 'none' ? noBalance('300.00', x) : creditWithBalance('300.00', x, `${(5 + off).toLocaleString('en-US')}.00`);
        const [a] = await forwardSms(t, s.device, [{ sender: senders[via]!, body, received_at: secondsAgo(10) }]);
        expect(a!.match_status).toBe('balance_mismatch');
        expect((await transactionRow(t, p.transaction.id)).status).toBe('awaiting_verification');
      }),
      { numRuns: 10 },
    );
  });
});
