import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTransaction } from '../../server/domain/payments/transactions.ts';
import { rejectTransaction, verifyTransactionManually } from '../../server/domain/sms/matching/review.ts';
import { matchSubmittedGatewayTrxId } from '../../server/domain/sms/matching/submission.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment } from '../support/seed.ts';
import { eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, transactionRow } from '../support/sms-matching.ts';

let t: TestContext;

beforeAll(async () => {
  // Every test pairs a phone of its own brand: more pairings than one address may make in production.
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off' });
});
afterAll(() => t?.close());

const em = () => t.runtime.deps.db;

describe('an admin verifies a payment the matcher left for review', () => {
  it('ambiguous amounts: low_confidence, then the admin names the payment and the SMS: completed, the SMS matched and signed', async () => {
    const scene = await smsScene(t);
    const first = await seedPayment(t, scene, { amount: '450.00' });
    const second = await seedPayment(t, scene, { amount: '450.00' });
    const trxId = newGatewayTrxId();
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('450.00', trxId) }]);
    expect(sms!.match_status).toBe('low_confidence');

    const result = await verifyTransactionManually(em(), { transactionId: first.transaction.id, smsRecordId: sms!.id, actor: 'admin:rahim', note: 'customer sent a screenshot' });
    expect(result.smsRecordId).toBe(sms!.id);
    expect(result.transaction).toMatchObject({ id: first.transaction.id, status: 'completed', completionSource: 'admin', gatewayTrxId: trxId });

    const payment = await t.request('GET', `/api/v1/payments/${first.paymentId}`, { token: scene.apiKey });
    expect(payment.body.data).toMatchObject({ status: 'completed', gateway_trx_id: trxId });
    expect(await eventsOf(t, first.transaction.id)).toEqual(['payment.completed']);
    const row = await smsRow(t, sms!.id);
    expect(row).toMatchObject({
      match_status: 'matched',
      transaction_id: String(first.transaction.id),
      // What the matcher saw stays: why it was left for review.
      confidence: '0.0000',
      candidate_ids: [String(first.transaction.id), String(second.transaction.id)],
      reason_code: 'trx_id_unclaimed',
      resolution: 'verified',
      resolved_by: 'admin:rahim',
      resolution_note: 'customer sent a screenshot',
    });
    expect(row.resolved_at).toBeInstanceOf(Date);
    expect(row.matched_at).toBeInstanceOf(Date);
    expect((await transactionRow(t, second.transaction.id)).status).toBe('pending');
    expect(await eventsOf(t, second.transaction.id)).toEqual([]);
  });

  it('without an SMS (the phone was offline): completed on the admin word alone', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '980.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const result = await verifyTransactionManually(em(), { transactionId: transaction.id, actor: 'admin', note: '' });
    expect(result).toMatchObject({ smsRecordId: null, transaction: { status: 'completed', completionSource: 'admin', gatewayTrxId: trxId } });
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
  });
});

describe('an admin rejects a payment', () => {
  it('same id with another amount: rejected, payment.failed, the SMS resolved, and the id freed for the genuine payment', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    // Someone claimed the id on a 1500.00 order; the SMS proves 150.00 was paid.
    const claim = await seedPayment(t, scene, { amount: '1500.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    // The real 150.00 order, whose customer has paid but not yet typed the id.
    const genuine = await createPayment(t, scene.apiKey, { amount: '150.00', currency: 'BDT' });
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('150.00', trxId) }]);
    expect(sms!.match_status).toBe('low_confidence');

    const rejected = await rejectTransaction(em(), { transactionId: claim.transaction.id, actor: 'admin:karim', reason: 'Paid amount does not match the order' });
    expect(rejected).toMatchObject({
      transaction: { status: 'failed', failureReason: 'Paid amount does not match the order', gatewayTrxId: null },
      resolvedSmsRecordIds: [sms!.id],
      releasedGatewayTrxId: trxId,
    });
    expect(await eventsOf(t, claim.transaction.id)).toEqual(['payment.failed']);
    const [event] = await t.sql<{ payload: string }>("SELECT payload FROM webhook_events WHERE transaction_id = $1 AND event = 'payment.failed'", [claim.transaction.id]);
    expect(JSON.parse(event!.payload).data.gateway_trx_id).toBe(trxId);
    expect(await smsRow(t, sms!.id)).toMatchObject({
      match_status: 'low_confidence',
      resolution: 'rejected',
      resolved_by: 'admin:karim',
      resolution_note: 'Paid amount does not match the order',
      transaction_id: null,
    });

    // Its customer now submits the id, and the stored SMS proves it.
    const tx = await startTransaction(em(), t.runtime.deps.crypto, { paymentId: genuine.payment_id, gatewayCode: scene.gateway.code, gatewayTrxId: trxId });
    expect((await matchSubmittedGatewayTrxId(em(), tx.id)).status).toBe('matched');
    expect((await transactionRow(t, tx.id)).status).toBe('completed');
    expect(await smsRow(t, sms!.id)).toMatchObject({ match_status: 'matched', transaction_id: String(tx.id), resolution: 'rejected' });
  });

  it('a record with several candidates stays open when one of them is rejected; the other is then verified with it', async () => {
    const scene = await smsScene(t);
    const a = await seedPayment(t, scene, { amount: '460.00' });
    const b = await seedPayment(t, scene, { amount: '460.00' });
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('460.00', newGatewayTrxId()) }]);
    expect(sms!.match_status).toBe('low_confidence');

    const rejected = await rejectTransaction(em(), { transactionId: a.transaction.id, actor: 'admin', reason: 'Order cancelled by the shop' });
    expect(rejected).toMatchObject({ resolvedSmsRecordIds: [], releasedGatewayTrxId: null, transaction: { status: 'failed' } });
    expect(await smsRow(t, sms!.id)).toMatchObject({ match_status: 'low_confidence', resolution: null });

    await verifyTransactionManually(em(), { transactionId: b.transaction.id, smsRecordId: sms!.id, actor: 'admin', note: 'the remaining order' });
    expect(await smsRow(t, sms!.id)).toMatchObject({ match_status: 'matched', transaction_id: String(b.transaction.id), resolution: 'verified' });
  });
});
