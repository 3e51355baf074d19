import { smsRowBinding } from '../../server/domain/sms/intake/record-cipher.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchSubmittedGatewayTrxId } from '../../server/domain/sms/matching/submission.ts';
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

const em = () => t.runtime.deps.db;
const CERTAIN = 'gateway trx id and amount match, timing fits, nothing contradicts';

describe('a forwarded SMS completes the payment it proves', () => {
  it('the payment claiming the id with the amount: matched, completed, payment.completed recorded, every parsed field kept', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { paymentId, transaction } = await seedPayment(t, scene, { amount: '1250.00', status: 'awaiting_verification', gatewayTrxId: trxId });

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
      confidence: '1.0000',
      candidate_ids: [String(transaction.id)],
      reason: CERTAIN,
      reason_code: 'certain_match',
      direction: 'in',
      suggestions: [],
      duplicate_of_id: null,
      resolution: null,
    });
    expect(row.matched_at).toBeInstanceOf(Date);
    // The paying customer's number is personal data: stored only as a cipher token.
    expect(row.parsed_sender_number).not.toContain('01712345678');
    expect(t.runtime.deps.crypto.pii.decrypt(row.parsed_sender_number!, 'sms_record.sender_number', smsRowBinding(row))).toBe('01712345678');
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
    expect(row).toMatchObject({ confidence: '1.0000', candidate_ids: [String(transaction.id)], reason: CERTAIN });
    // Gateways are global: the previous test's bKash gateway shares this sender and template; the record names the paid one.
    expect(Number((await t.sql<{ n: string }>("SELECT count(*) AS n FROM gateways WHERE 'bKash' = ANY(sms_senders)"))[0]!.n)).toBeGreaterThan(1);
    expect(row.gateway_id).toBe(String(scene.gateway.id));
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
    const [idA, idB] = [newGatewayTrxId(), newGatewayTrxId()];
    const a = await seedPayment(t, scene, { amount: '110.00', status: 'awaiting_verification', gatewayTrxId: idA });
    const b = await seedPayment(t, scene, { amount: '220.00', status: 'awaiting_verification', gatewayTrxId: idB });
    const answers = await forwardSms(t, scene.device, [
      { sender: 'bKash', body: smsBodies.bkash('220.00', idB) },
      { sender: 'bKash', body: 'Your bKash verification code is 482913. Never share this code.' },
      { sender: 'bKash', body: smsBodies.bkash('110.00', idA) },
      { sender: 'bKash', body: smsBodies.bkash('330.00', newGatewayTrxId()) },
    ]);
    expect(answers.map((x) => [x.match_status, x.trx_id])).toEqual([
      ['matched', b.transaction.trxId],
      // A one-time code is refused by the brand's filter rules: nothing of it is stored.
      ['screened_out', null],
      ['matched', a.transaction.trxId],
      ['no_candidate', null],
    ]);
  });

  it('a batch mixing new SMS, a message id given twice and a copy: every answer is the record as stored', async () => {
    const scene = await smsScene(t);
    const id = newGatewayTrxId();
    const a = await seedPayment(t, scene, { amount: '440.00', status: 'awaiting_verification', gatewayTrxId: id });
    const body = smsBodies.bkash('440.00', id);
    const answers = await forwardSms(t, scene.device, [
      { sender: 'bKash', body, device_message_id: `mix-${a.transaction.id}-1` },
      { sender: 'bKash', body: smsBodies.bkash('441.00', newGatewayTrxId()), device_message_id: `mix-${a.transaction.id}-2` },
      { sender: 'bKash', body, device_message_id: `mix-${a.transaction.id}-1` },
      { sender: 'bKash', body, device_message_id: `mix-${a.transaction.id}-3` },
    ]);
    expect(answers.map((x) => [x.match_status, x.trx_id])).toEqual([
      ['matched', a.transaction.trxId],
      ['no_candidate', null],
      ['matched', a.transaction.trxId],
      ['duplicate', null],
    ]);
    expect(answers[2]!.id).toBe(answers[0]!.id);
    expect(answers[3]!.duplicate_of).toBe(answers[0]!.id);
    expect((await smsRow(t, answers[3]!.id)).reason_code).toBe('duplicate_content');
    const stored = await t.sql<{ id: string; match_status: string; duplicate_of_id: string | null; trx_id: string | null }>(
      'SELECT r.id, r.match_status, r.duplicate_of_id, t.trx_id FROM sms_records r LEFT JOIN transactions t ON t.id = r.transaction_id WHERE r.id = ANY($1::bigint[])',
      [answers.map((x) => x.id)],
    );
    const byId = new Map(stored.map((r) => [Number(r.id), r]));
    for (const x of answers) {
      const r = byId.get(x.id)!;
      expect({ id: x.id, match_status: x.match_status, trx_id: x.trx_id, duplicate_of: x.duplicate_of }).toEqual({
        id: Number(r.id),
        match_status: r.match_status,
        trx_id: r.trx_id,
        duplicate_of: r.duplicate_of_id === null ? null : Number(r.duplicate_of_id),
      });
    }
  });
});

describe('order does not matter', () => {
  // The checkout creates a manual-gateway transaction when the customer submits the gateway trx id,
  // i.e. after paying: the SMS often arrives before the transaction exists.
  const submitOnCheckout = (gatewayCode: string, paymentId: string, gatewayTrxId: string) =>
    t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway: gatewayCode, gateway_trx_id: gatewayTrxId } });

  it('SMS first (no transaction yet: no_candidate), then the customer submits the trx id on checkout: matched at that moment', async () => {
    const scene = await smsScene(t);
    const payment = await createPayment(t, scene.apiKey, { amount: '777.00', currency: 'BDT' });
    const trxId = newGatewayTrxId();
    const [stored] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('777.00', trxId) }]);
    expect(stored).toMatchObject({ match_status: 'no_candidate', trx_id: null });
    expect((await smsRow(t, stored!.id)).reason).toBe(`no transaction claims gateway trx id ${trxId} and no open payment has amount 777.00 within the window`);

    const res = await submitOnCheckout(scene.gateway.code, payment.payment_id, trxId.toLowerCase());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // The customer sees the payment completed in the answer to the submission itself.
    expect(res.body.data).toMatchObject({ status: 'completed', gateway_trx_id: trxId.toLowerCase() });
    const { id: transactionId } = (await t.sql<{ id: string }>('SELECT id FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]))[0]!;

    const merchantView = await t.request('GET', `/api/v1/payments/${payment.payment_id}`, { token: scene.apiKey });
    expect(merchantView.body.data).toMatchObject({ status: 'completed', trx_id: res.body.data.trx_id });
    expect(await transactionRow(t, Number(transactionId))).toMatchObject({ status: 'completed', completion_source: 'sms' });
    expect(await smsRow(t, stored!.id)).toMatchObject({
      match_status: 'matched',
      transaction_id: transactionId,
      confidence: '1.0000',
      candidate_ids: [transactionId],
      reason: `${CERTAIN} (matched when the customer submitted the gateway trx id)`,
      reason_code: 'certain_match',
    });
    expect(await eventsOf(t, Number(transactionId))).toEqual(['payment.completed']);
    // Asking again changes nothing.
    expect((await matchSubmittedGatewayTrxId(em(), Number(transactionId))).status).toBe('no_candidate');
    expect(await eventsOf(t, Number(transactionId))).toEqual(['payment.completed']);
  });

  it('submission first, SMS later: matched on intake; both orders end with one match', async () => {
    const scene = await smsScene(t);
    const payment = await createPayment(t, scene.apiKey, { amount: '778.00', currency: 'BDT' });
    const trxId = newGatewayTrxId();
    const res = await submitOnCheckout(scene.gateway.code, payment.payment_id, trxId);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.status).toBe('awaiting_verification');

    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('778.00', trxId) }]);
    expect(answer).toMatchObject({ match_status: 'matched', trx_id: res.body.data.trx_id });
    const [{ id: transactionId }] = await t.sql<{ id: string }>('SELECT id FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]);
    const matched = await t.sql<{ n: string }>("SELECT count(*) AS n FROM sms_records WHERE transaction_id = $1 AND match_status = 'matched'", [transactionId]);
    expect(matched[0]!.n).toBe('1');
    expect(await eventsOf(t, Number(transactionId))).toEqual(['payment.completed']);
    const page = await t.request('GET', `/api/checkout/v1/payments/${payment.payment_id}`);
    expect(page.body.data).toMatchObject({ status: 'completed', transaction: { status: 'completed' } });
  });
});
