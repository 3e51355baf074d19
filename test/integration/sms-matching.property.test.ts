import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../contract/common/errors.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { createSmsMatcher } from '../../server/domain/sms/matching/service.ts';
import { matchSubmittedGatewayTrxId } from '../../server/domain/sms/matching/submission.ts';
import { ingestSmsBatch } from '../../server/domain/sms/intake/service.ts';
import { pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedTransaction } from '../support/seed.ts';
import { comparePayerNumbers } from '../../server/domain/sms/matching/payer-number.ts';
import { SMS_SENDER_NUMBER_CONTEXT } from '../../server/domain/sms/matching/queries/records.ts';
import { declaredPayerNumber } from '../../server/domain/sms/matching/service.ts';
import { smsRecordBinding } from '../../server/domain/sms/intake/record-cipher.ts';
import { defaultGatewayTemplates } from '../../server/domain/sms/templates/presets/index.ts';
import { creditTemplate, creditWithBalance, grouped, submitAtCheckout } from '../support/sms-matching.ts';

const withoutBalance = (amount: string, trxId: string, _balance: string, from: string) => creditWithBalance(amount, trxId, '', from).replace(' Balance Tk .', '');
/** bKash's Send Money wording (read as money out by the bKash preset), with the recipient's number where a credit names the payer. */
const debitWithBalance = (amount: string, trxId: string, balance: string, to: string, variant: number) =>
  `Send Money Tk ${grouped(amount)} to ${to} successful. Ref ${variant}. Fee Tk 5.00. Balance Tk ${balance}. TrxID ${trxId} at 15/03/2024 14:32`;

/**
 * The matching property (docs/matching.md) against the real service and
 * database: random open payments (some claiming ids, some with a declared
 * payer number), random SMS (repeated, forwarded by two phones, forged
 * variants with a known trx id, other payer numbers, random balances, wallet
 * debits carrying a claimed id and amount) and
 * random customer submissions, all sent at once. Whatever the interleaving,
 * the stored rows must show: no SMS completed two payments, no payment
 * completed twice, one gateway trx id completed one payment, and every
 * completion is proved by exactly one SMS that says its amount and trx id,
 * whose id the payment claimed before, whose payer number does not contradict
 * the declared one and whose balance does not contradict the phone's chain;
 * and no debit is ever anything but money out.
 */

let t: TestContext;
let gateway: GatewayView;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_API_KEY: 'off' });
  // Reads balance and fee too, so the balance chain takes part.
  // (and the default template, for SMS without a balance).
  gateway = await seedGateway(t, 'bkash', { sms_templates: [creditTemplate, ...defaultGatewayTemplates.bkash.templates.map((x) => ({ ...x }))] });
});
afterAll(() => t?.close());

const AMOUNTS = ['100.00', '200.00', '300.00'];

const scenario = fc.record({
  payments: fc.array(
    fc.record({ amount: fc.constantFrom(...AMOUNTS), claim: fc.option(fc.nat(3), { nil: null }), declared: fc.constantFrom(undefined, '01712345515', '01812345678') }),
    { minLength: 1, maxLength: 6 },
  ),
  sms: fc.array(
    fc.record({
      amount: fc.constantFrom(...AMOUNTS),
      trx: fc.nat(3),
      from: fc.constantFrom('01712345515', '***515', '01XXXXXX678', '01812345678', '*****15'),
      // null: a text without a balance, read by the default template (no chain).
      balance: fc.constantFrom(null, null, null, '1.00', '5,000.00', '5,100.00', '5,300.00', '5,600.00'),
      // Another text with the same amount and id (a forged or re-sent notice): another content hash.
      variant: fc.nat(1),
      // Now and then a debit of the wallet (Send Money) carrying a claimed id and the claimed amount: money out, never a proof.
      debit: fc.constantFrom(false, false, false, true),
      copies: fc.integer({ min: 1, max: 3 }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  // Customers reporting payment at the checkout with one of the ids: each a new payment with the
  // amount and declared number of one of the payments above (so it competes with them for the SMS).
  submissions: fc.array(fc.record({ payment: fc.nat(5), trx: fc.nat(3) }), { maxLength: 4 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

async function run(s: Scenario): Promise<void> {
  const { brandId, apiKey } = await t.createBrand('Property Brand');
  const phones = [await pairDevice(t, { brandId }), await pairDevice(t, { brandId })];
  const run = randomBytes(3).toString('hex').toUpperCase();
  const trxIds = [0, 1, 2, 3].map((i) => `P${run}${i}X`);

  const payments = [];
  // Which payment claimed which id (before any SMS): a completion must be one of these.
  const claims = new Set<string>();
  for (const p of s.payments) {
    const claim = p.claim === null ? null : trxIds[p.claim]!;
    try {
      const tx = (await seedTransaction(t, { apiKey, gateway, amount: p.amount, status: claim ? 'awaiting_verification' : 'pending', gatewayTrxId: claim, senderNumber: p.declared })).transaction;
      payments.push(tx);
      if (claim) claims.add(`${tx.id}:${claim}`);
    } catch (err) {
      // Two random payments claiming one id: the database refuses the second, as it must.
      if (!(err instanceof AppError && err.code === 'GATEWAY_TRX_ID_TAKEN')) throw err;
    }
  }

  const deps = { cipher: t.runtime.deps.crypto.pii, hashKey: t.runtime.deps.crypto.blindIndexKey, match: createSmsMatcher({ cipher: t.runtime.deps.crypto.pii }) };
  const bodies = s.sms.map((m) => ({
    ...m,
    body: m.debit
      ? debitWithBalance(m.amount, trxIds[m.trx]!, m.balance ?? '1.00', m.from, m.variant)
      : (m.balance === null ? withoutBalance : creditWithBalance)(m.amount, trxIds[m.trx]!, m.balance ?? '', m.from).replace(/Ref \w+/, `Ref ${m.variant}`),
  }));
  const work: Array<Promise<unknown>> = [];
  bodies.forEach((m, i) => {
    for (let c = 0; c < m.copies; c++) {
      const phone = phones[c % 2]!;
      const sms = { deviceMessageId: `m${i}-${c}`, sender: 'bKash', body: m.body, receivedAt: new Date(), simSlot: null };
      work.push(ingestSmsBatch(t.runtime.deps.db, deps, { brandId, deviceId: phone.deviceId }, [sms]));
    }
  });
  // Created before the race; what races is the checkout's submission and its look-up of stored SMS.
  const submissions = [];
  for (const sub of s.submissions) {
    const like = s.payments[sub.payment % s.payments.length]!;
    submissions.push({ ...like, paymentId: (await createPayment(t, apiKey, { amount: like.amount })).payment_id, trxId: trxIds[sub.trx]! });
  }
  for (const sub of submissions) {
    work.push(
      (async () => {
        let submitted;
        try {
          submitted = await submitAtCheckout(t, sub.paymentId, { gateway, gatewayTrxId: sub.trxId, ...(sub.declared === undefined ? {} : { senderNumber: sub.declared }) });
          claims.add(`${submitted.id}:${sub.trxId}`);
        } catch (err) {
          // The id is someone else's: refused cleanly, nothing to match.
          if (err instanceof AppError && err.code === 'GATEWAY_TRX_ID_TAKEN') return;
          throw err;
        }
        await matchSubmittedGatewayTrxId(t.runtime.deps.db, submitted.id, undefined, t.runtime.deps.crypto.pii);
      })(),
    );
  }
  await Promise.all(work);
  await check(brandId, claims);
  const debits = new Set(bodies.flatMap((m, i) => (m.debit ? Array.from({ length: m.copies }, (_, c) => `m${i}-${c}`) : [])));
  const debitRecords = (await t.sql<{ device_message_id: string; match_status: string; transaction_id: string | null }>('SELECT device_message_id, match_status, transaction_id FROM sms_records WHERE brand_id = $1', [brandId])).filter((r) => debits.has(r.device_message_id));
  expect(debitRecords.filter((r) => !['money_out', 'duplicate'].includes(r.match_status) || r.transaction_id !== null), 'a debit is money out, never a proof').toEqual([]);
}

async function check(brandId: number, claims: ReadonlySet<string>): Promise<void> {
  const records = await t.sql<{
    id: string;
    match_status: string;
    transaction_id: string | null;
    parsed_amount: string | null;
    parsed_trx_id: string | null;
    content_hash: string;
    parsed_sender_number: string | null;
    chain_state: string | null;
    device_id: string;
    device_message_id: string;
  }>(
    'SELECT id, match_status, transaction_id, parsed_amount::text, parsed_trx_id, content_hash, parsed_sender_number, chain_state, device_id, device_message_id FROM sms_records WHERE brand_id = $1',
    [brandId],
  );
  const txs = await t.sql<{ id: string; status: string; amount: string; gateway_trx_id: string | null; sender_number_encrypted: string | null; trx_id: string }>(
    'SELECT id, status, amount::text, gateway_trx_id, sender_number_encrypted, trx_id FROM transactions WHERE brand_id = $1',
    [brandId],
  );
  const pii = t.runtime.deps.crypto.pii;
  const events = await t.sql<{ transaction_id: string; n: string }>(
    "SELECT transaction_id, count(*) AS n FROM webhook_events WHERE brand_id = $1 AND event = 'payment.completed' GROUP BY transaction_id",
    [brandId],
  );

  expect(records.filter((r) => r.match_status === 'pending'), 'every SMS is decided').toEqual([]);
  const matched = records.filter((r) => r.match_status === 'matched');
  const byTx = new Map<string, number>();
  for (const r of matched) byTx.set(r.transaction_id!, (byTx.get(r.transaction_id!) ?? 0) + 1);
  expect([...byTx.values()].filter((n) => n > 1), 'no payment proved by two SMS').toEqual([]);
  const perContent = new Map<string, number>();
  for (const r of matched) perContent.set(r.content_hash, (perContent.get(r.content_hash) ?? 0) + 1);
  expect([...perContent.values()].filter((n) => n > 1), 'no SMS content matched twice').toEqual([]);
  const perTrx = new Map<string, number>();
  for (const r of matched) perTrx.set(r.parsed_trx_id!, (perTrx.get(r.parsed_trx_id!) ?? 0) + 1);
  expect([...perTrx.values()].filter((n) => n > 1), 'no gateway trx id matched twice').toEqual([]);

  const completed = txs.filter((x) => x.status === 'completed');
  expect(completed.map((x) => x.id).sort(), 'completed = proved by an SMS').toEqual([...byTx.keys()].sort());
  for (const x of completed) {
    const proof = matched.find((r) => r.transaction_id === x.id)!;
    expect(proof.parsed_amount).toBe(x.amount);
    expect(x.gateway_trx_id!.toUpperCase()).toBe(proof.parsed_trx_id);
    // Never on amount alone: the payment claimed that id before the SMS completed it.
    expect([...claims].some((c) => c.toUpperCase() === `${x.id}:${proof.parsed_trx_id}`), `transaction ${x.id} claimed ${proof.parsed_trx_id}`).toBe(true);
    const binding = smsRecordBinding({ brandId, deviceId: proof.device_id, deviceMessageId: proof.device_message_id });
    const smsNumber = proof.parsed_sender_number === null ? null : pii.decrypt(proof.parsed_sender_number, SMS_SENDER_NUMBER_CONTEXT, binding);
    const declared = declaredPayerNumber(pii, { brandId, trxId: x.trx_id, payerNumberEncrypted: x.sender_number_encrypted });
    expect(comparePayerNumbers(smsNumber, declared), 'payer numbers do not contradict').not.toBe('disagree');
    expect(['mismatch', 'impossible', 'unreadable'], 'the balance chain does not contradict').not.toContain(proof.chain_state);
  }
  const completedIds = new Set(completed.map((x) => x.id));
  expect(events.filter((e) => !completedIds.has(e.transaction_id)), 'no event without completion').toEqual([]);
  expect(events.filter((e) => e.n !== '1'), 'one payment.completed per completion').toEqual([]);
  expect(events.length).toBe(completed.length);
  const upperIds = completed.map((x) => x.gateway_trx_id!.toUpperCase());
  expect(new Set(upperIds).size, 'one gateway trx id completes one payment').toBe(upperIds.length);
}

describe('property: concurrent SMS and submissions never double-complete', () => {
  it('holds for random payments, SMS (with repeats, copies and forgeries) and submissions', async () => {
    await fc.assert(fc.asyncProperty(scenario, run), { numRuns: 25, endOnFailure: true });
  }, 240_000);
});
