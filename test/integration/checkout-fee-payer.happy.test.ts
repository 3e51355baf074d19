import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchSubmittedGatewayTrxId } from '../../server/domain/sms/matching/submission.ts';
import { startTransaction } from '../../server/domain/payments/transactions.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, gatewayPresets, seedGateway } from '../support/seed.ts';
import { eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, transactionRow } from '../support/sms-matching.ts';
import { adminRequest } from './admin-support.ts';

/**
 * Who pays the gateway fee decides the one number the customer is told to
 * send, and the SMS must carry exactly that number to complete the payment.
 * bKash-like gateway: 1.85 % of 500.00 = 9.25.
 */

let t: TestContext;
const em = () => t.runtime.deps.db;
const checkoutApi = (id: string) => `/api/checkout/v1/payments/${id}`;
async function pageOf(paymentId: string): Promise<string> {
  const res = await fetch(`${t.baseUrl}/checkout/${paymentId}`);
  expect(res.status).toBe(200);
  return res.text();
}

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

describe('the fee_payer setting (admin API)', () => {
  it('defaults to merchant, can be set to customer, and anything else is a 400 naming fee_payer with nothing changed', async () => {
    const created = await adminRequest(t, 'POST', '/gateways', { ...gatewayPresets.bkash(), code: 'fee-admin' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.fee_payer).toBe('merchant');

    const patched = await adminRequest(t, 'PATCH', '/gateways/fee-admin', { fee_payer: 'customer' });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data.fee_payer).toBe('customer');

    const bad = await adminRequest(t, 'PATCH', '/gateways/fee-admin', { fee_payer: 'shared' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'fee_payer' });
    expect((await adminRequest(t, 'GET', '/gateways/fee-admin')).body.data.fee_payer).toBe('customer');

    const badCreate = await adminRequest(t, 'POST', '/gateways', { ...gatewayPresets.bkash(), code: 'fee-bad', fee_payer: 'nobody' });
    expect(badCreate.status).toBe(400);
    expect(badCreate.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'fee_payer' });
    expect((await adminRequest(t, 'GET', '/gateways/fee-bad')).status).toBe(404);
  });
});

describe('the checkout shows one number to send', () => {
  it('customer pays: amount + fee in the API and on the page; the transaction records amount, fee and the amount the SMS must carry', async () => {
    const { apiKey } = await t.createBrand('Fee Shop', { mode: 'test' });
    const g = await seedGateway(t, 'bkash', { fee_payer: 'customer' });
    const payment = await createPayment(t, apiKey, { amount: '500.00', currency: 'BDT' });

    const view = (await t.request('GET', checkoutApi(payment.payment_id))).body.data;
    expect(view.gateways.find((x: { code: string }) => x.code === g.code)).toMatchObject({ amount: '500.00', fee: '9.25', amount_to_send: '509.25' });

    const html = await pageOf(payment.payment_id);
    expect(html).toContain('509.25');
    expect(html).toContain('data-copy="509.25"');
    expect(html).not.toContain('data-copy="500.00"');
    expect(html).not.toContain('Gateway fee');

    const started = await t.request('POST', `${checkoutApi(payment.payment_id)}/transactions`, { body: { gateway: g.code, gateway_trx_id: newGatewayTrxId() } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body.data).toMatchObject({ amount: '500.00', fee: '9.25', amount_to_send: '509.25' });
    const [row] = await t.sql<{ amount: string; fee: string; sms_amount: string }>(
      'SELECT amount::text, fee::text, sms_amount::text FROM transactions WHERE trx_id = $1',
      [started.body.data.trx_id],
    );
    expect(row).toEqual({ amount: '500.00', fee: '9.25', sms_amount: '509.25' });
  });

  it('merchant pays: the amount only; the fee is recorded for the merchant and never shown to the customer', async () => {
    const { apiKey } = await t.createBrand('Absorbing Shop', { mode: 'test' });
    const g = await seedGateway(t, 'bkash', { fee_payer: 'merchant', fee_fixed: '3.33' });
    const payment = await createPayment(t, apiKey, { amount: '500.00', currency: 'BDT' });
    const view = (await t.request('GET', checkoutApi(payment.payment_id))).body.data;
    expect(view.gateways.find((x: { code: string }) => x.code === g.code)).toMatchObject({ amount: '500.00', fee: '0.00', amount_to_send: '500.00' });
    const html = await pageOf(payment.payment_id);
    // 1.85 % of 500.00 + 3.33 = 12.58: the merchant's business.
    expect(html).not.toContain('12.58');
    expect(html).toContain('data-copy="500.00"');

    const started = await t.request('POST', `${checkoutApi(payment.payment_id)}/transactions`, { body: { gateway: g.code, gateway_trx_id: newGatewayTrxId() } });
    expect(started.body.data).toMatchObject({ amount: '500.00', fee: '0.00', amount_to_send: '500.00' });
    const [row] = await t.sql<{ fee: string; sms_amount: string }>('SELECT fee::text, sms_amount::text FROM transactions WHERE trx_id = $1', [started.body.data.trx_id]);
    expect(row).toEqual({ fee: '12.58', sms_amount: '500.00' });
  });

  it('a later change of the setting does not change what an already-told customer must send', async () => {
    const scene = await smsScene(t);
    await adminRequest(t, 'PATCH', `/gateways/${scene.gateway.code}`, { fee_payer: 'customer' });
    const { transaction } = await seedPayment(t, scene, { amount: '500.00', status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });
    expect(transaction.smsAmount).toBe('509.25');
    await adminRequest(t, 'PATCH', `/gateways/${scene.gateway.code}`, { fee_payer: 'merchant' });
    const [row] = await t.sql<{ sms_amount: string }>('SELECT sms_amount::text FROM transactions WHERE id = $1', [transaction.id]);
    expect(row!.sms_amount).toBe('509.25');
  });
});

describe('SMS matching compares with the number the customer was told to send', () => {
  async function customerPaysScene() {
    const scene = await smsScene(t);
    const patched = await adminRequest(t, 'PATCH', `/gateways/${scene.gateway.code}`, { fee_payer: 'customer' });
    expect(patched.status).toBe(200);
    return scene;
  }

  it('customer pays: an SMS with amount + fee completes the payment', async () => {
    const scene = await customerPaysScene();
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '500.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('509.25', trxId) }]);
    expect(answer).toMatchObject({ match_status: 'matched', trx_id: transaction.trxId });
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
  });

  it('customer pays: an SMS with the bare amount (the fee not sent) is not certain: review, amount_mismatch, not completed', async () => {
    const scene = await customerPaysScene();
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '500.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('500.00', trxId) }]);
    expect(answer).toMatchObject({ match_status: 'low_confidence', trx_id: null });
    expect(await smsRow(t, answer!.id)).toMatchObject({
      transaction_id: null,
      reason_code: 'amount_mismatch',
      reason: `transaction ${transaction.id} claims the id with amount 509.25, the SMS says 500.00`,
    });
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });

  it('customer pays, SMS first: the later submission matches the stored SMS carrying amount + fee', async () => {
    const scene = await customerPaysScene();
    const payment = await createPayment(t, scene.apiKey, { amount: '500.00', currency: 'BDT' });
    const trxId = newGatewayTrxId();
    const [stored] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('509.25', trxId) }]);
    expect(stored!.match_status).toBe('no_candidate');
    const tx = await startTransaction(em(), t.runtime.deps.crypto, { paymentId: payment.payment_id, gatewayCode: scene.gateway.code, gatewayTrxId: trxId });
    const result = await matchSubmittedGatewayTrxId(em(), tx.id);
    expect(result.status).toBe('matched');
    expect((await transactionRow(t, tx.id)).status).toBe('completed');
  });

  it('merchant pays: the SMS with amount + fee is not the payment (the customer was told the amount)', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '500.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('509.25', trxId) }]);
    expect(answer).toMatchObject({ match_status: 'low_confidence' });
    expect((await smsRow(t, answer!.id)).reason_code).toBe('amount_mismatch');
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });
});
