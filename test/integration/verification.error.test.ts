import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejectTransaction, verifyTransactionManually } from '../../server/domain/sms/matching/review.ts';
import { matchSubmittedGatewayTrxId } from '../../server/domain/sms/matching/submission.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, submitAtCheckout, transactionRow, type SmsScene } from '../support/sms-matching.ts';

let t: TestContext;

beforeAll(async () => {
  // Every test pairs a phone of its own brand: more pairings than one address may make in production.
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off' });
});
afterAll(() => t?.close());

const em = () => t.runtime.deps.db;

async function refused(p: Promise<unknown>, code: string, field: string | null = null, message?: string): Promise<void> {
  await expect(p).rejects.toMatchObject({ name: 'AppError', code, field, ...(message === undefined ? {} : { message }) });
}

/** A brand with two open 450.00 payments and one SMS left `low_confidence` between them. */
async function ambiguous(scene?: SmsScene) {
  const s = scene ?? (await smsScene(t));
  const a = await seedPayment(t, s, { amount: '450.00' });
  const b = await seedPayment(t, s, { amount: '450.00' });
  const trxId = newGatewayTrxId();
  const [sms] = await forwardSms(t, s.device, [{ sender: 'bKash', body: smsBodies.bkash('450.00', trxId) }]);
  expect(sms!.match_status).toBe('low_confidence');
  return { scene: s, a: a.transaction, b: b.transaction, smsId: sms!.id, trxId };
}

describe('verification is refused, and changes nothing', () => {
  it('unknown transaction: TRANSACTION_NOT_FOUND', async () => {
    await refused(verifyTransactionManually(em(), { transactionId: 987654321, actor: 'admin' }), 'TRANSACTION_NOT_FOUND');
    await refused(rejectTransaction(em(), { transactionId: 987654321, actor: 'admin', reason: 'x' }), 'TRANSACTION_NOT_FOUND');
  });

  it('a transaction no longer open: INVALID_STATE, for verify and reject alike', async () => {
    const scene = await smsScene(t);
    const done = await seedPayment(t, scene, { amount: '100.00', status: 'completed' });
    const failed = await seedPayment(t, scene, { amount: '100.00', status: 'failed' });
    for (const { transaction } of [done, failed]) {
      await refused(
        verifyTransactionManually(em(), { transactionId: transaction.id, actor: 'admin' }),
        'INVALID_STATE',
        null,
        `Transaction is ${transaction.status}; only a pending, processing or awaiting_verification transaction can be verified`,
      );
      await refused(rejectTransaction(em(), { transactionId: transaction.id, actor: 'admin', reason: 'no' }), 'INVALID_STATE');
    }
    expect(await eventsOf(t, done.transaction.id)).toEqual(['payment.completed']);
    expect(await eventsOf(t, failed.transaction.id)).toEqual(['payment.failed']);
  });

  it("another brand's SMS record is answered like a missing one", async () => {
    const mine = await ambiguous();
    const theirs = await ambiguous();
    await refused(verifyTransactionManually(em(), { transactionId: mine.a.id, smsRecordId: theirs.smsId, actor: 'admin' }), 'SMS_RECORD_NOT_FOUND', 'sms_record_id');
    await refused(verifyTransactionManually(em(), { transactionId: mine.a.id, smsRecordId: 987654321, actor: 'admin' }), 'SMS_RECORD_NOT_FOUND', 'sms_record_id');
    expect((await transactionRow(t, mine.a.id)).status).toBe('pending');
    expect((await smsRow(t, theirs.smsId)).match_status).toBe('low_confidence');
  });

  it('an SMS that is not unmatched evidence (matched, no_match): INVALID_STATE', async () => {
    const x = await ambiguous();
    await verifyTransactionManually(em(), { transactionId: x.a.id, smsRecordId: x.smsId, actor: 'admin' });
    await refused(
      verifyTransactionManually(em(), { transactionId: x.b.id, smsRecordId: x.smsId, actor: 'admin' }),
      'INVALID_STATE',
      'sms_record_id',
      `SMS record ${x.smsId} is matched; only a no_candidate, low_confidence or balance_mismatch record can prove a transaction`,
    );
    const [unparsed] = await forwardSms(t, x.scene.device, [{ sender: 'bKash', body: 'You have received a gift voucher from bKash. TrxID GIFT12345' }]);
    expect(unparsed!.match_status).toBe('no_match');
    await refused(verifyTransactionManually(em(), { transactionId: x.b.id, smsRecordId: unparsed!.id, actor: 'admin' }), 'INVALID_STATE', 'sms_record_id');
    expect((await transactionRow(t, x.b.id)).status).toBe('pending');
  });

  it('an SMS that says something else: SMS_EVIDENCE_MISMATCH (amount, trx id, gateway)', async () => {
    const scene = await smsScene(t);
    const nagad = await seedGateway(t, 'nagad');
    const other = await seedPayment(t, scene, { amount: '451.00' });
    const claimed = await seedPayment(t, scene, { amount: '450.00', status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });
    const x = await ambiguous(scene);
    await refused(
      verifyTransactionManually(em(), { transactionId: other.transaction.id, smsRecordId: x.smsId, actor: 'admin' }),
      'SMS_EVIDENCE_MISMATCH',
      'sms_record_id',
      `SMS record ${x.smsId} says amount 450.00, transaction ${other.transaction.id} is 451.00`,
    );
    await refused(
      verifyTransactionManually(em(), { transactionId: claimed.transaction.id, smsRecordId: x.smsId, actor: 'admin' }),
      'SMS_EVIDENCE_MISMATCH',
      'sms_record_id',
      `SMS record ${x.smsId} carries gateway trx id ${x.trxId}, transaction ${claimed.transaction.id} carries ${claimed.transaction.gatewayTrxId}`,
    );
    const onNagad = await seedPayment(t, { ...scene, gateway: nagad }, { amount: '450.00' });
    await refused(verifyTransactionManually(em(), { transactionId: onNagad.transaction.id, smsRecordId: x.smsId, actor: 'admin' }), 'SMS_EVIDENCE_MISMATCH', 'sms_record_id');
    for (const id of [other.transaction.id, claimed.transaction.id, onNagad.transaction.id]) expect(await eventsOf(t, id)).toEqual([]);
    expect((await smsRow(t, x.smsId)).match_status).toBe('low_confidence');
  });

  it("the SMS's trx id is claimed by another transaction: GATEWAY_TRX_ID_TAKEN, nothing half-done", async () => {
    const x = await ambiguous();
    // Another customer has reported paying with the id (the submission's look-up of stored SMS has not run yet).
    const { payment_id } = await createPayment(t, x.scene.apiKey, { amount: '450.00' });
    const claimer = await submitAtCheckout(t, payment_id, { gateway: x.scene.gateway, gatewayTrxId: x.trxId });
    expect(claimer).toMatchObject({ status: 'awaiting_verification', gatewayTrxId: x.trxId });
    await refused(verifyTransactionManually(em(), { transactionId: x.a.id, smsRecordId: x.smsId, actor: 'admin' }), 'GATEWAY_TRX_ID_TAKEN', 'gateway_trx_id');
    expect(await transactionRow(t, x.a.id)).toMatchObject({ status: 'pending', gateway_trx_id: null });
    expect(await eventsOf(t, x.a.id)).toEqual([]);
    expect(await smsRow(t, x.smsId)).toMatchObject({ match_status: 'low_confidence', resolution: null, transaction_id: null });
  });

  it('actor, note and reason are checked: VALIDATION_ERROR naming the field', async () => {
    const { transaction } = await seedPayment(t, await smsScene(t), { amount: '120.00' });
    await refused(verifyTransactionManually(em(), { transactionId: transaction.id, actor: '  ' }), 'VALIDATION_ERROR', 'actor');
    await refused(verifyTransactionManually(em(), { transactionId: transaction.id, actor: 'a'.repeat(101) }), 'VALIDATION_ERROR', 'actor');
    await refused(verifyTransactionManually(em(), { transactionId: transaction.id, actor: 'admin', note: 'n'.repeat(501) }), 'VALIDATION_ERROR', 'note');
    await refused(rejectTransaction(em(), { transactionId: transaction.id, actor: 'admin', reason: ' ' }), 'VALIDATION_ERROR', 'reason');
    await refused(rejectTransaction(em(), { transactionId: transaction.id, actor: 'admin', reason: 'r'.repeat(501) }), 'VALIDATION_ERROR', 'reason');
    expect((await transactionRow(t, transaction.id)).status).toBe('pending');
  });
});

describe('racing decisions on one payment', () => {
  it('verify and reject at the same moment: exactly one wins, with exactly one event', async () => {
    const scene = await smsScene(t);
    for (let round = 0; round < 10; round++) {
      const { transaction } = await seedPayment(t, scene, { amount: `${500 + round}.00`, status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });
      const results = await Promise.allSettled([
        verifyTransactionManually(em(), { transactionId: transaction.id, actor: 'admin:one' }),
        rejectTransaction(em(), { transactionId: transaction.id, actor: 'admin:two', reason: 'not paid' }),
      ]);
      const won = results.map((r) => r.status === 'fulfilled');
      expect(won.filter(Boolean), `round ${round}`).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toMatchObject({ code: 'INVALID_STATE' });
      const status = (await transactionRow(t, transaction.id)).status;
      expect(status).toBe(won[0] ? 'completed' : 'failed');
      expect(await eventsOf(t, transaction.id)).toEqual([won[0] ? 'payment.completed' : 'payment.failed']);
    }
  });

  it('an admin verifying one candidate with the SMS while the other customer submits its id: one payment completes, once', async () => {
    const scene = await smsScene(t);
    for (let round = 0; round < 10; round++) {
      const x = await ambiguous(scene);
      // Another customer reports paying with the SMS's id on the checkout: the commit, then its look-up of stored SMS.
      const { payment_id } = await createPayment(t, scene.apiKey, { amount: '450.00' });
      const submit = async () => matchSubmittedGatewayTrxId(em(), (await submitAtCheckout(t, payment_id, { gateway: scene.gateway, gatewayTrxId: x.trxId })).id);
      const [verified, submitted] = await Promise.allSettled([verifyTransactionManually(em(), { transactionId: x.a.id, smsRecordId: x.smsId, actor: 'admin' }), submit()]);
      // The customer's transaction, if its submission was not refused.
      const [claim] = await t.sql<{ id: string }>('SELECT t.id FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1', [payment_id]);
      const claimer = claim ? Number(claim.id) : null;
      const a = await transactionRow(t, x.a.id);
      const b = claimer === null ? null : await transactionRow(t, claimer);
      const completed = [a, b].filter((r) => r?.status === 'completed');
      expect(completed, `round ${round}: ${verified.status} / ${submitted.status}`).toHaveLength(1);
      const winner = a.status === 'completed' ? x.a.id : claimer!;
      expect(await smsRow(t, x.smsId)).toMatchObject({ match_status: 'matched', transaction_id: String(winner) });
      expect(completed[0]!.gateway_trx_id!.toUpperCase()).toBe(x.trxId);
      expect(await eventsOf(t, winner)).toEqual(['payment.completed']);
      // The loser was refused cleanly: the admin by a taken id or an already matched SMS, the customer by a taken id.
      if (winner === claimer) {
        expect(verified).toMatchObject({ status: 'rejected', reason: { name: 'AppError' } });
        expect(['GATEWAY_TRX_ID_TAKEN', 'INVALID_STATE']).toContain((verified as PromiseRejectedResult).reason.code);
        expect(submitted).toMatchObject({ status: 'fulfilled', value: { status: 'matched', smsRecordId: x.smsId } });
      } else {
        expect(submitted).toMatchObject({ status: 'rejected', reason: { code: 'GATEWAY_TRX_ID_TAKEN' } });
      }
    }
  });
});
