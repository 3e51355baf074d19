import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTransaction } from '../../server/domain/payments/transactions.ts';
import { matchSubmittedGatewayTrxId } from '../../server/domain/sms/matching/submission.ts';
import { pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment } from '../support/seed.ts';
import { waitForLockWaiters } from '../support/wait.ts';
import { eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsScene, transactionRow, type SmsScene } from '../support/sms-matching.ts';

let t: TestContext;

beforeAll(async () => {
  // Many pairings and forwards from one address in a few seconds: far above production quotas.
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off' });
});
afterAll(() => t?.close());

const ROUNDS = 20;
const CERTAIN = 'gateway trx id and amount match, timing fits, nothing contradicts';
const em = () => t.runtime.deps.db;

async function matchedCount(transactionId: number): Promise<number> {
  const [row] = await t.sql<{ n: string }>("SELECT count(*) AS n FROM sms_records WHERE transaction_id = $1 AND match_status = 'matched'", [transactionId]);
  return Number(row!.n);
}

describe('racing deliveries of one payment SMS', () => {
  it('the same SMS from two phones at the same moment: one match, one duplicate, one completion', async () => {
    const scene = await smsScene(t);
    const second = await pairDevice(t, { brandId: scene.brandId });
    for (let round = 0; round < ROUNDS; round++) {
      const amount = `${100 + round}.00`;
      const trxId = newGatewayTrxId();
      // Only a payment claiming the id can be completed by an SMS (never one with the amount alone).
      const { transaction } = await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: trxId });
      const body = smsBodies.bkash(amount, trxId);
      const [a, b] = await Promise.all([forwardSms(t, scene.device, [{ sender: 'bKash', body }]), forwardSms(t, second, [{ sender: 'bKash', body }])]);
      const answers = [a[0]!, b[0]!];
      expect(answers.map((x) => x.match_status).sort(), `round ${round}`).toEqual(['duplicate', 'matched']);
      const original = answers.find((x) => x.match_status === 'matched')!;
      const duplicate = answers.find((x) => x.match_status === 'duplicate')!;
      expect(duplicate.duplicate_of).toBe(original.id);
      const [dupRow] = await t.sql<{ reason: string; transaction_id: string | null }>('SELECT reason, transaction_id FROM sms_records WHERE id = $1', [duplicate.id]);
      expect(dupRow).toEqual({ reason: `same sender and text as SMS record ${original.id}, forwarded before`, transaction_id: null });
      expect(original.trx_id).toBe(transaction.trxId);
      expect((await transactionRow(t, transaction.id)).status).toBe('completed');
      expect(await matchedCount(transaction.id)).toBe(1);
      expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
    }
  });

  it('two different texts carrying the same trx id at the same moment: one match, one duplicate', async () => {
    const scene = await smsScene(t);
    for (let round = 0; round < ROUNDS; round++) {
      const amount = `${200 + round}.00`;
      const trxId = newGatewayTrxId();
      const { transaction } = await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: trxId });
      // Each body has its own random reference, so the content hashes differ.
      const [a, b] = await Promise.all([
        forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, trxId) }]),
        forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, trxId) }]),
      ]);
      expect([a[0]!.match_status, b[0]!.match_status].sort(), `round ${round}`).toEqual(['duplicate', 'matched']);
      expect(await matchedCount(transaction.id)).toBe(1);
      expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
    }
  });

  it('two SMS with other ids but the amount of the one open payment: both wait for review naming it, it is never completed on amount alone', async () => {
    const scene = await smsScene(t);
    for (let round = 0; round < ROUNDS; round++) {
      const amount = `${300 + round}.00`;
      const { transaction } = await seedPayment(t, scene, { amount });
      const [a, b] = await Promise.all([
        forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, newGatewayTrxId()) }]),
        forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, newGatewayTrxId()) }]),
      ]);
      expect([a[0]!.match_status, b[0]!.match_status], `round ${round}`).toEqual(['low_confidence', 'low_confidence']);
      const rows = await t.sql<{ candidate_ids: string[]; reason_code: string }>('SELECT candidate_ids, reason_code FROM sms_records WHERE id = ANY($1::bigint[])', [[a[0]!.id, b[0]!.id]]);
      expect(rows).toEqual([
        { candidate_ids: [String(transaction.id)], reason_code: 'trx_id_unclaimed' },
        { candidate_ids: [String(transaction.id)], reason_code: 'trx_id_unclaimed' },
      ]);
      expect(await matchedCount(transaction.id)).toBe(0);
      expect((await transactionRow(t, transaction.id)).status).toBe('pending');
      expect(await eventsOf(t, transaction.id)).toEqual([]);
    }
  });
});

describe('the SMS and the customer submission at the same moment', () => {
  async function race(scene: SmsScene, round: number): Promise<void> {
    const amount = `${400 + round}.00`;
    const trxId = newGatewayTrxId();
    const payment = await createPayment(t, scene.apiKey, { amount, currency: 'BDT' });
    const [[sms], submitted] = await Promise.all([
      forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, trxId) }]),
      t.request('POST', `/api/checkout/v1/payments/${payment.payment_id}/transactions`, { body: { gateway: scene.gateway.code, gateway_trx_id: trxId } }),
    ]);
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const [{ id: transactionId }] = await t.sql<{ id: string }>('SELECT id FROM transactions WHERE trx_id = $1', [submitted.body.data.trx_id]);
    // Whichever direction decided last saw the other; the record says which one matched it.
    const [record] = await t.sql<{ match_status: string; transaction_id: string; reason: string }>('SELECT match_status, transaction_id, reason FROM sms_records WHERE id = $1', [sms!.id]);
    expect(record!.match_status, `round ${round}`).toBe('matched');
    expect(record!.transaction_id).toBe(transactionId);
    expect([CERTAIN, `${CERTAIN} (matched when the customer submitted the gateway trx id)`]).toContain(record!.reason);
    // Matched by the submission: the customer's answer already says so.
    if (record!.reason.endsWith('submitted the gateway trx id)')) expect(submitted.body.data.status).toBe('completed');
    expect((await transactionRow(t, Number(transactionId))).status).toBe('completed');
    expect(await matchedCount(Number(transactionId))).toBe(1);
    expect(await eventsOf(t, Number(transactionId))).toEqual(['payment.completed']);
  }

  it('never both, never neither: the payment completes exactly once whichever commits first', async () => {
    const scene = await smsScene(t);
    for (let round = 0; round < ROUNDS; round++) await race(scene, round);
  });

  it('an SMS decision held up mid-way while the submission commits: the submission waits for it and still matches', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const payment = await createPayment(t, scene.apiKey, { amount: '555.00', currency: 'BDT' });
    // An open payment with the same amount: the SMS decision locks its intent, which this test holds.
    const decoy = await seedPayment(t, scene, { amount: '555.00' });
    const blocker = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM payment_intents WHERE id = $1 FOR UPDATE', [decoy.transaction.intentId]);
      const forwarded = forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('555.00', trxId) }]);
      await waitForLockWaiters(blocker, 1);
      // The customer submits while the SMS decision (which loaded its candidates before this transaction existed) waits.
      const submitted = (async () => {
        const tx = await startTransaction(em(), t.runtime.deps.crypto, { paymentId: payment.payment_id, gatewayCode: scene.gateway.code, gatewayTrxId: trxId });
        return { tx, match: await matchSubmittedGatewayTrxId(em(), tx.id) };
      })();
      await Promise.race([submitted, waitForLockWaiters(blocker, 2)]);
      await blocker.query('ROLLBACK');
      const [[sms], { tx, match }] = await Promise.all([forwarded, submitted]);

      expect(match).toEqual({ status: 'matched', smsRecordId: sms!.id, reason: CERTAIN });
      expect((await transactionRow(t, tx.id)).status).toBe('completed');
      expect(await matchedCount(tx.id)).toBe(1);
      expect(await eventsOf(t, tx.id)).toEqual(['payment.completed']);
      // The decoy has the SMS's amount only: a suggestion at most, never completed.
      expect((await transactionRow(t, decoy.transaction.id)).status).toBe('pending');
      expect(await eventsOf(t, decoy.transaction.id)).toEqual([]);
    } finally {
      await blocker.end();
    }
  });
});
