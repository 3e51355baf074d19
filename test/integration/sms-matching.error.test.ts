import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startTransaction } from '../../server/domain/payments/transactions.ts';
import { matchSubmittedGatewayTrxId } from '../../server/domain/sms/matching/submission.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedSetting } from '../support/seed.ts';
import { screenSms } from '../../server/domain/filter-rules/screen.ts';
import { getFilterRules } from '../../server/domain/filter-rules/service.ts';
import { eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, transactionRow } from '../support/sms-matching.ts';

let t: TestContext;

beforeAll(async () => {
  // Every test pairs a phone of its own brand: more pairings than one address may make in production.
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off' });
});
afterAll(() => t?.close());

const em = () => t.runtime.deps.db;
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

const lookAlikes: Array<{ sender: string; why: string; body: string; officialSender?: string }> = JSON.parse(
  readFileSync(new URL('../fixtures/sms/look-alikes.json', import.meta.url), 'utf8'),
).messages;

describe('no_match: nothing a gateway would send for money received', () => {
  it('every look-alike (OTP, debits, promotions, spoofed senders) is no_match and completes nothing', async () => {
    const scene = await smsScene(t);
    await seedGateway(t, 'nagad');
    await seedGateway(t, 'rocket');
    // Open payments with every amount the look-alikes mention: a parse would find a candidate.
    const amounts = ['500.00', '1000.00', '350.00', '25.00', '1250.00', '1200.00'];
    const seeded = [];
    for (const amount of amounts) seeded.push(await seedPayment(t, scene, { amount }));

    const answers = await forwardSms(t, scene.device, lookAlikes.map((m) => ({ sender: m.sender, body: m.body })));
    // What the brand's filter rules refuse (codes, senders no gateway has) is screened out and never stored;
    // the rest reaches matching and parses as nothing.
    const rules = await getFilterRules(em(), scene.brandId);
    const refused = lookAlikes.map((m) => !screenSms(rules, m).forward);
    // A debit of the wallet is recognised as money out (balance chain evidence only), never a credit.
    expect(answers.map((a) => a.match_status)).toEqual(refused.map((r, i) => (r ? 'screened_out' : /debit/.test(lookAlikes[i]!.why) && answers[i]!.match_status === 'money_out' ? 'money_out' : 'no_match')));
    expect(refused.filter(Boolean).length).toBeGreaterThanOrEqual(5);
    for (const [i, a] of answers.entries()) if (refused[i]) expect(a.id, lookAlikes[i]!.why).toBeNull();
    for (const { transaction } of seeded) expect((await transactionRow(t, transaction.id)).status).toBe('pending');

    const stored = answers.flatMap((a, i) => (refused[i] ? [] : [[a, lookAlikes[i]!] as const]));
    const rows = await Promise.all(stored.map(([a]) => smsRow(t, a.id)));
    for (const [i, row] of rows.entries()) {
      if (row.match_status === 'money_out') expect(row, stored[i]![1].why).toMatchObject({ direction: 'out', transaction_id: null, confidence: '0.0000', candidate_ids: [] });
      else expect(row, stored[i]![1].why).toMatchObject({ parsed_amount: null, parsed_trx_id: null, transaction_id: null, confidence: '0.0000', candidate_ids: [] });
    }
    const spoofed = stored.flatMap(([, m], i) => (m.officialSender && !['bKash', 'NAGAD', '16216'].includes(m.sender) ? [rows[i]!] : []));
    for (const row of spoofed) expect(row.reason).toBe('the sender is not an official SMS sender of any gateway');
    for (const row of spoofed) expect(row.reason_code).toBe('not_official_sender');
  });

  it('a genuine text under a spoofed sender leaves the transaction claiming its id waiting', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '300.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const [answer] = await forwardSms(t, scene.device, [{ sender: '+8801712345678', body: smsBodies.bkash('300.00', trxId) }]);
    // No gateway has that sender, so the brand's filter rules refuse it: nothing is stored or matched.
    expect(answer).toMatchObject({ match_status: 'screened_out', id: null, trx_id: null });
    expect(await transactionRow(t, transaction.id)).toMatchObject({ status: 'awaiting_verification', completed_at: null });
    expect(await eventsOf(t, transaction.id)).toEqual([]);
  });
});

describe('never auto-completed', () => {
  it('same gateway trx id, another amount: low_confidence naming the transaction, not completed', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '1500.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('150.00', trxId) }]);
    expect(answer).toMatchObject({ match_status: 'low_confidence', trx_id: null });
    expect(await smsRow(t, answer!.id)).toMatchObject({
      transaction_id: null,
      confidence: '0.0000',
      candidate_ids: [String(transaction.id)],
      parsed_amount: '150.00',
      reason: `transaction ${transaction.id} claims the id with amount 1500.00, the SMS says 150.00`,
      reason_code: 'amount_mismatch',
    });
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
    expect(await eventsOf(t, transaction.id)).toEqual([]);
  });

  it('the submission direction too: a stored SMS with the id but another amount is not evidence', async () => {
    const scene = await smsScene(t);
    const payment = await createPayment(t, scene.apiKey, { amount: '820.00', currency: 'BDT' });
    const trxId = newGatewayTrxId();
    const [stored] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('802.00', trxId) }]);
    expect(stored!.match_status).toBe('no_candidate');
    const tx = await startTransaction(em(), t.runtime.deps.crypto, { paymentId: payment.payment_id, gatewayCode: scene.gateway.code, gatewayTrxId: trxId });
    const result = await matchSubmittedGatewayTrxId(em(), tx.id);
    expect(result).toEqual({ status: 'low_confidence', smsRecordId: null, reason: `SMS ${stored!.id}: transaction ${tx.id} claims the id with amount 820.00, the SMS says 802.00` });
    expect((await transactionRow(t, tx.id)).status).toBe('awaiting_verification');
    expect(await smsRow(t, stored!.id)).toMatchObject({ match_status: 'low_confidence', transaction_id: null, candidate_ids: [String(tx.id)], reason: result.reason, reason_code: 'amount_mismatch' });
  });

  it('open payments with the amount but nobody claiming the id: low_confidence with every one suggested, none completed', async () => {
    const scene = await smsScene(t);
    const a = await seedPayment(t, scene, { amount: '450.00' });
    const b = await seedPayment(t, scene, { amount: '450.00' });
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('450.00', newGatewayTrxId()) }]);
    expect(answer!.match_status).toBe('low_confidence');
    const row = await smsRow(t, answer!.id);
    expect(row).toMatchObject({
      confidence: '0.0000',
      candidate_ids: [String(a.transaction.id), String(b.transaction.id)],
      reason_code: 'trx_id_unclaimed',
    });
    expect(row.suggestions.map((x) => x.transaction_id)).toEqual([a.transaction.id, b.transaction.id]);
    expect((await transactionRow(t, a.transaction.id)).status).toBe('pending');
    expect((await transactionRow(t, b.transaction.id)).status).toBe('pending');
  });

  it('an id that already completed a payment: a second, different SMS with it is duplicate', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '600.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const [first] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('600.00', trxId) }]);
    expect(first!.match_status).toBe('matched');
    await seedPayment(t, scene, { amount: '600.00' });
    // Another text (other balance, other reference) carrying the same id: a forged or re-sent notice.
    const [again] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('600.00', trxId).replace('Balance Tk 5,432.10', 'Balance Tk 6,032.10') }]);
    expect(again).toMatchObject({ match_status: 'duplicate', trx_id: null, duplicate_of: null });
    expect(await smsRow(t, again!.id)).toMatchObject({
      transaction_id: null,
      candidate_ids: [String(transaction.id)],
      reason: `gateway trx id ${trxId} already completed transaction ${transaction.id} (proved by SMS record ${first!.id})`,
    });
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
  });

  it('an id claimed by another brand: review, never completes ours', async () => {
    const scene = await smsScene(t);
    const other = await smsScene(t);
    const trxId = newGatewayTrxId();
    const theirs = await seedPayment(t, other, { amount: '90.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const ours = await seedPayment(t, scene, { amount: '90.00' });
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('90.00', trxId) }]);
    expect(answer!.match_status).toBe('low_confidence');
    expect(await smsRow(t, answer!.id)).toMatchObject({
      candidate_ids: [String(ours.transaction.id), String(theirs.transaction.id)],
      reason: `gateway trx id ${trxId} is claimed by transaction ${theirs.transaction.id} of another brand`,
    });
    expect((await transactionRow(t, ours.transaction.id)).status).toBe('pending');
    expect((await transactionRow(t, theirs.transaction.id)).status).toBe('awaiting_verification');
  });
});

describe('timing: an SMS is evidence only for a payment that existed when it arrived', () => {
  it('an SMS older than the payment is not evidence, in either order', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '350.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    // The phone received it 10 minutes before the payment was created (a replay of an earlier payment's SMS).
    const [old] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('350.00', trxId), received_at: minutesAgo(10) }]);
    expect(old!.match_status).toBe('low_confidence');
    expect(await smsRow(t, old!.id)).toMatchObject({ reason_code: 'outside_window', candidate_ids: [String(transaction.id)] });
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');

    const byAmount = await seedPayment(t, scene, { amount: '351.00' });
    const [oldByAmount] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('351.00', newGatewayTrxId()), received_at: minutesAgo(10) }]);
    expect(oldByAmount!.match_status).toBe('no_candidate');
    expect((await transactionRow(t, byAmount.transaction.id)).status).toBe('pending');
  });

  it('the submission direction: an SMS received before the payment existed is not evidence', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const [old] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('360.00', trxId), received_at: minutesAgo(10) }]);
    expect(old!.match_status).toBe('no_candidate');
    const payment = await createPayment(t, scene.apiKey, { amount: '360.00', currency: 'BDT' });
    const tx = await startTransaction(em(), t.runtime.deps.crypto, { paymentId: payment.payment_id, gatewayCode: scene.gateway.code, gatewayTrxId: trxId });
    expect((await matchSubmittedGatewayTrxId(em(), tx.id)).status).toBe('low_confidence');
    expect((await transactionRow(t, tx.id)).status).toBe('awaiting_verification');
  });

  it('a phone clock running ahead does not make an SMS newer than the server saw it', async () => {
    const scene = await smsScene(t);
    // No grace: the payment below is created moments after the server saw the SMS.
    await seedSetting(t, 'match_clock_grace_seconds', 0);
    onTestFinished(() => seedSetting(t, 'match_clock_grace_seconds', 300));
    const trxId = newGatewayTrxId();
    const [early] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('370.00', trxId), received_at: new Date(Date.now() + 3_600_000).toISOString() }]);
    expect(early!.match_status).toBe('no_candidate');
    // Created after the server received the SMS: the phone's "in an hour" must not make it evidence.
    const { transaction } = await seedPayment(t, scene, { amount: '370.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    expect((await matchSubmittedGatewayTrxId(em(), transaction.id)).status).toBe('low_confidence');
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });

  it('a payment created longer than match_window_minutes before the SMS is not a candidate', async () => {
    const scene = await smsScene(t);
    await seedSetting(t, 'match_window_minutes', 5);
    try {
      const { transaction } = await seedPayment(t, scene, { amount: '380.00' });
      await t.sql(`UPDATE payment_intents SET created_at = now() - interval '6 minutes' WHERE id = $1`, [transaction.intentId]);
      const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('380.00', newGatewayTrxId()) }]);
      expect(answer!.match_status).toBe('no_candidate');
      expect(await smsRow(t, answer!.id)).toMatchObject({ reason_code: 'no_candidate', candidate_ids: [] });
    } finally {
      await seedSetting(t, 'match_window_minutes', 1440);
    }
  });

  it('match_threshold no longer lets anything but certain evidence through: at 0 an amount-only fit still waits for review', async () => {
    const scene = await smsScene(t);
    await seedSetting(t, 'match_threshold', 0);
    try {
      const { transaction } = await seedPayment(t, scene, { amount: '390.00' });
      const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('390.00', newGatewayTrxId()) }]);
      expect(answer!.match_status).toBe('low_confidence');
      expect(await smsRow(t, answer!.id)).toMatchObject({ confidence: '0.0000', candidate_ids: [String(transaction.id)], reason_code: 'trx_id_unclaimed' });
      expect((await transactionRow(t, transaction.id)).status).toBe('pending');
      expect(await eventsOf(t, transaction.id)).toEqual([]);
    } finally {
      await seedSetting(t, 'match_threshold', 0.8);
    }
  });
});
