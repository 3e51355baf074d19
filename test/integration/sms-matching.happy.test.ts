import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTransaction } from '../../server/domain/payments/transactions.ts';
import { matchSubmittedGatewayTrxId } from '../../server/domain/sms/submission.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment } from '../support/seed.ts';
import {
  eventsOf,
  forwardSms,
  newGatewayTrxId,
  newNumericTrxId,
  officialSender,
  seedPayment,
  smsBodies,
  smsRow,
  smsScene,
  transactionRow,
} from '../support/sms-matching.ts';

let t: TestContext;

beforeAll(async () => {
  // Every test pairs a phone of its own brand: more pairings than one address may make in production.
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off' });
});
afterAll(() => t?.close());

const em = () => t.runtime.deps.orm.em.fork();

describe('a forwarded SMS completes the payment it proves', () => {
  it('the only open payment with the amount: matched, completed, payment.completed recorded, every parsed field kept', async () => {
    const scene = await smsScene(t);
    const { paymentId, transaction } = await seedPayment(t, scene, { amount: '1250.00' });
    const trxId = newGatewayTrxId();

    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('1250.00', trxId) }]);
    expect(answer).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId, duplicate_of: null });

    const payment = await t.request('GET', `/api/v1/payments/${paymentId}`, { token: scene.apiKey });
    expect(payment.status).toBe(200);
    expect(payment.body.data).toMatchObject({ id: transaction.id, status: 'completed', gateway_trx_id: trxId, amount: '1250.00' });
    expect(payment.body.data.completed_at).toMatch(/Z$/);
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);

    const row = await smsRow(t, answer!.id);
    expect(row).toMatchObject({
      match_status: 'matched',
      gateway_id: String(scene.gateway.id),
      parsed_amount: '1250.00',
      parsed_trx_id: trxId,
      transaction_id: String(transaction.id),
      confidence: '0.8000',
      candidate_ids: [String(transaction.id)],
      reason: 'only open transaction with amount 1250.00',
      duplicate_of_id: null,
      resolution: null,
    });
    expect(row.matched_at).toBeInstanceOf(Date);
    // The paying customer's number is personal data: stored only as a cipher token.
    expect(row.parsed_sender_number).not.toContain('01712345678');
    expect(t.runtime.deps.crypto.pii.decrypt(row.parsed_sender_number!, 'sms_record.sender_number')).toBe('01712345678');
    expect((await transactionRow(t, transaction.id)).completion_source).toBe('sms');
  });

  it('the submitted gateway trx id and the amount agree: certain match (confidence 1), whatever case the phone gives the sender', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '500.00', status: 'awaiting_verification', gatewayTrxId: trxId.toLowerCase() });
    // A second open payment with the same amount does not make it ambiguous: the trx id decides.
    const other = await seedPayment(t, scene, { amount: '500.00' });

    const [answer] = await forwardSms(t, scene.device, [{ sender: 'BKASH', body: smsBodies.bkash('500.00', trxId) }]);
    expect(answer).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
    const row = await smsRow(t, answer!.id);
    expect(row).toMatchObject({ confidence: '1.0000', candidate_ids: [String(transaction.id)], reason: 'gateway trx id and amount match' });
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    expect((await transactionRow(t, other.transaction.id)).status).toBe('pending');
  });

  it.each([
    ['nagad', () => newGatewayTrxId('N')],
    ['rocket', () => newNumericTrxId()],
  ] as const)('the %s format matches too', async (preset, trxId) => {
    const scene = await smsScene(t, preset);
    const id = trxId();
    const { transaction } = await seedPayment(t, scene, { amount: '12345.50', status: 'awaiting_verification', gatewayTrxId: id });
    const [answer] = await forwardSms(t, scene.device, [{ sender: officialSender[preset], body: smsBodies[preset]('12345.50', id) }]);
    expect(answer).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
    expect(await smsRow(t, answer!.id)).toMatchObject({ parsed_amount: '12345.50', parsed_trx_id: id, gateway_id: String(scene.gateway.id) });
  });

  it('a batch: each SMS is decided on its own and answered in order', async () => {
    const scene = await smsScene(t);
    const a = await seedPayment(t, scene, { amount: '110.00' });
    const b = await seedPayment(t, scene, { amount: '220.00' });
    const answers = await forwardSms(t, scene.device, [
      { sender: 'bKash', body: smsBodies.bkash('220.00', newGatewayTrxId()) },
      { sender: 'bKash', body: 'Your bKash verification code is 482913. Never share this code.' },
      { sender: 'bKash', body: smsBodies.bkash('110.00', newGatewayTrxId()) },
      { sender: 'bKash', body: smsBodies.bkash('330.00', newGatewayTrxId()) },
    ]);
    expect(answers.map((x) => [x.match_status, x.trx_id])).toEqual([
      ['matched', b.transaction.trxId],
      ['no_match', null],
      ['matched', a.transaction.trxId],
      ['no_candidate', null],
    ]);
  });
});

describe('order does not matter', () => {
  // The checkout creates a manual-gateway transaction when the customer submits the gateway trx id,
  // i.e. after paying: the SMS can arrive before the transaction exists.
  const submitOnCheckout = (scene: { gateway: { code: string } }, paymentId: string, gatewayTrxId: string) =>
    startTransaction(em(), t.runtime.deps.crypto, { paymentId, gatewayCode: scene.gateway.code, gatewayTrxId });

  it('SMS first (no transaction yet: no_candidate), then the customer submits the trx id: the stored SMS completes it, once', async () => {
    const scene = await smsScene(t);
    const payment = await createPayment(t, scene.apiKey, { amount: '777.00', currency: 'BDT' });
    const trxId = newGatewayTrxId();
    const [stored] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('777.00', trxId) }]);
    expect(stored).toMatchObject({ match_status: 'no_candidate', trx_id: null });
    expect((await smsRow(t, stored!.id)).reason).toBe('no open transaction with amount 777.00 created within 1440 minutes before the SMS');

    const transaction = await submitOnCheckout(scene, payment.payment_id, trxId.toLowerCase());
    expect(transaction.status).toBe('awaiting_verification');
    expect(await matchSubmittedGatewayTrxId(em(), transaction.id)).toEqual({ status: 'matched', smsRecordId: stored!.id, reason: 'gateway trx id and amount match' });

    expect(await transactionRow(t, transaction.id)).toMatchObject({ status: 'completed', completion_source: 'sms' });
    expect(await smsRow(t, stored!.id)).toMatchObject({ match_status: 'matched', transaction_id: String(transaction.id), confidence: '1.0000', candidate_ids: [String(transaction.id)] });
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
    // Asking again changes nothing.
    expect((await matchSubmittedGatewayTrxId(em(), transaction.id)).status).toBe('no_candidate');
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
  });

  it('submission first, SMS later: matched on intake; both orders end with one match', async () => {
    const scene = await smsScene(t);
    const payment = await createPayment(t, scene.apiKey, { amount: '778.00', currency: 'BDT' });
    const trxId = newGatewayTrxId();
    const transaction = await submitOnCheckout(scene, payment.payment_id, trxId);
    expect(await matchSubmittedGatewayTrxId(em(), transaction.id)).toMatchObject({ status: 'no_candidate', smsRecordId: null });
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('778.00', trxId) }]);
    expect(answer).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
    const matched = await t.sql<{ n: string }>("SELECT count(*) AS n FROM sms_records WHERE transaction_id = $1 AND match_status = 'matched'", [transaction.id]);
    expect(matched[0]!.n).toBe('1');
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
  });
});
