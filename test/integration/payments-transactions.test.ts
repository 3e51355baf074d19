import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedRate, seedTransaction } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { updateGateway } from '../../server/domain/gateways/service.ts';
import {
  completeTransaction,
  failTransaction,
  getTransaction,
  startTransaction,
} from '../../server/domain/payments/transactions.ts';
import { expireDueIntents } from '../../server/domain/payments/intents.ts';
import { declaredPayerNumber } from '../../server/domain/sms/matching/service.ts';
import { paymentEventData } from '../../server/domain/payments/view.ts';
import { AppError } from '../../contract/common/errors.ts';
import { transaction } from '../../server/domain/db.ts';

/**
 * The transaction state machine other areas call (checkout, SMS matching, admin):
 * conversion, limits, one live transaction per intent, one gateway trx id ever,
 * conditional transitions and their events, expiry.
 */

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;

const em = () => t.runtime.deps.db;
const keys = () => t.runtime.deps.crypto;

beforeAll(async () => {
  // No workers: the scheduled expiry sweep must not race the expiry assertions below.
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey } = await t.createBrand('State Shop', { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash');
  sandbox = await seedGateway(t, 'sandbox', { currencies: ['USD', 'EUR'], min_amount: '1.00', max_amount: '5000.00' });
});
afterAll(() => t?.close());

async function rejects(p: Promise<unknown>, code: string): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
  return err as AppError;
}

async function transactionCount(paymentId: string): Promise<number> {
  const rows = await t.sql<{ n: string }>(
    'SELECT count(*) AS n FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1',
    [paymentId],
  );
  return Number(rows[0]!.n);
}

async function events(event: string, trxIdOrPayment: string): Promise<any[]> {
  const rows = await t.sql<{ payload: string }>(
    `SELECT payload FROM webhook_events WHERE event = $1
       AND ((payload::jsonb)->'data'->>'trx_id' = $2 OR (payload::jsonb)->'data'->>'payment_id' = $2) ORDER BY id`,
    [event, trxIdOrPayment],
  );
  return rows.map((r) => JSON.parse(r.payload));
}

describe('currency conversion when starting a transaction', () => {
  it('uses the direct rate, rounding half-up once', async () => {
    await seedRate(t, 'USD', 'BDT', '100.125');
    const p = await createPayment(t, apiKey, { amount: '1.00', currency: 'USD' });
    const tx = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, gatewayTrxId: null });
    // 1.00 * 100.125 = 100.125 -> 100.13 (half-up); fee 1.85 % of 100.13 = 1.852405 -> 1.85
    expect(tx).toMatchObject({ amount: '100.13', currency: 'BDT', exchangeRate: '100.125', fee: '1.85', status: 'pending' });
  });

  it('divides by the inverse rate when only the other direction is configured', async () => {
    await seedRate(t, 'BDT', 'EUR', '0.0085');
    const p = await createPayment(t, apiKey, { amount: '10.00', currency: 'EUR' });
    const tx = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code });
    // 10.00 / 0.0085 = 1176.470588... -> 1176.47; the recorded rate is 1/0.0085 to 10 places.
    expect(tx).toMatchObject({ amount: '1176.47', currency: 'BDT', exchangeRate: '117.6470588235' });
  });

  it('prefers the direct rate when both directions exist', async () => {
    await seedRate(t, 'EUR', 'USD', '1.1');
    await seedRate(t, 'USD', 'EUR', '0.5');
    const p = await createPayment(t, apiKey, { amount: '10.00', currency: 'EUR' });
    // sandbox takes EUR directly: no conversion at all.
    const direct = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: sandbox.code });
    expect(direct).toMatchObject({ amount: '10.00', currency: 'EUR', exchangeRate: null });
    const gbp = await seedGateway(t, 'sandbox', { currencies: ['USD'] });
    const q = await createPayment(t, apiKey, { amount: '10.00', currency: 'EUR' });
    const converted = await startTransaction(em(), keys(), { paymentId: q.payment_id, gatewayCode: gbp.code });
    expect(converted).toMatchObject({ amount: '11.00', currency: 'USD', exchangeRate: '1.1' });
  });

  it('no rate either way: CURRENCY_CONVERSION_FAILED and nothing is created', async () => {
    // GBP is taken by a GBP gateway, so the intent exists; bkash (BDT) has no GBP rate.
    await seedGateway(t, 'sandbox', { currencies: ['GBP'] });
    const p = await createPayment(t, apiKey, { amount: '10.00', currency: 'GBP' });
    const err = await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, gatewayTrxId: 'NORATE123' }), 'CURRENCY_CONVERSION_FAILED');
    expect(err.message).toBe('No exchange rate converts GBP into BDT');
    expect(await transactionCount(p.payment_id)).toBe(0);
    const claimed = await t.sql("SELECT 1 FROM transactions WHERE gateway_trx_id = 'NORATE123'");
    expect(claimed).toHaveLength(0);
  });

  it('checks the limits on the converted amount', async () => {
    await seedRate(t, 'USD', 'BDT', '120');
    // A USD gateway with a tiny minimum, so the intents themselves are acceptable.
    await seedGateway(t, 'sandbox', { currencies: ['USD'], min_amount: '0.01' });
    const small = await createPayment(t, apiKey, { amount: '0.08', currency: 'USD' }); // 9.60 BDT < 10.00
    await rejects(startTransaction(em(), keys(), { paymentId: small.payment_id, gatewayCode: bkash.code }), 'AMOUNT_BELOW_MINIMUM');
    const big = await createPayment(t, apiKey, { amount: '208.34', currency: 'USD' }); // 25,000.80 BDT > 25,000.00
    const err = await rejects(startTransaction(em(), keys(), { paymentId: big.payment_id, gatewayCode: bkash.code }), 'AMOUNT_EXCEEDS_MAXIMUM');
    expect(err.message).toBe('Amount exceeds maximum');
    const edge = await createPayment(t, apiKey, { amount: '208.33', currency: 'USD' }); // 24,999.60 BDT
    expect((await startTransaction(em(), keys(), { paymentId: edge.payment_id, gatewayCode: bkash.code })).amount).toBe('24999.60');
    expect(await transactionCount(small.payment_id)).toBe(0);
    expect(await transactionCount(big.payment_id)).toBe(0);
  });
});

describe('starting a transaction', () => {
  it('manual gateway: awaiting_verification with a gateway trx id, pending without; automatic: processing', async () => {
    const a = await createPayment(t, apiKey);
    expect((await startTransaction(em(), keys(), { paymentId: a.payment_id, gatewayCode: bkash.code, gatewayTrxId: ' AWAIT123 ', senderNumber: '01712345678' })).status).toBe(
      'awaiting_verification',
    );
    const b = await createPayment(t, apiKey);
    const pending = await startTransaction(em(), keys(), { paymentId: b.payment_id, gatewayCode: bkash.code });
    expect(pending).toMatchObject({ status: 'pending', gatewayTrxId: null });
    // A gateway trx id reaches a transaction only with the checkout's start or its
    // replacement of an awaiting one: a pending transaction takes none afterwards.
    const replaced = await t.request('PUT', `/api/checkout/v1/payments/${b.payment_id}/transaction/gateway-trx-id`, { body: { gateway_trx_id: 'LATER456' } });
    expect([replaced.status, replaced.body.errors?.[0]?.code]).toEqual([409, 'INVALID_STATE']);
    expect(await getTransaction(em(), pending.id)).toMatchObject({ status: 'pending', gatewayTrxId: null });
    const again = await t.request('PUT', `/api/checkout/v1/payments/${a.payment_id}/transaction/gateway-trx-id`, { body: { gateway_trx_id: 'LATER456', sender_number: '+8801812345678' } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: 'LATER456' });
    const c = await createPayment(t, apiKey, { amount: '20.00', currency: 'USD' });
    expect((await startTransaction(em(), keys(), { paymentId: c.payment_id, gatewayCode: sandbox.code })).status).toBe('processing');
  });

  it('refuses a second live transaction (PAYMENT_ALREADY_STARTED) but allows a new one after a failure', async () => {
    const p = await createPayment(t, apiKey);
    const first = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code });
    await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code }), 'PAYMENT_ALREADY_STARTED');
    await failTransaction(em(), first.id, { reason: 'customer gave up' });
    const second = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code });
    expect(second.id).not.toBe(first.id);
    // The payment shows the latest transaction.
    const res = await t.request('GET', `/api/v1/payments/${p.payment_id}`, { token: apiKey });
    expect(res.body.data).toMatchObject({ transaction_id: second.id, status: 'pending' });
    await completeTransaction(em(), second.id, { source: 'admin', gatewayTrxId: 'RETRYOK1' });
    await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code }), 'PAYMENT_ALREADY_STARTED');
  });

  it('ten concurrent starts on one intent: exactly one transaction', async () => {
    const p = await createPayment(t, apiKey);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, gatewayTrxId: `RACE${i}XYZ` })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((x) => x.status === 'rejected')) {
      expect(((r as PromiseRejectedResult).reason as AppError).code).toBe('PAYMENT_ALREADY_STARTED');
    }
    expect(await transactionCount(p.payment_id)).toBe(1);
  });

  it('one gateway trx id is claimed once per brand, whatever its case, and completes one payment of any brand', async () => {
    const other = await t.createBrand('Other Shop');
    const p = await createPayment(t, apiKey);
    const first = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, gatewayTrxId: 'BFC2ONCE99' });
    const same = await createPayment(t, apiKey);
    const err = await rejects(startTransaction(em(), keys(), { paymentId: same.payment_id, gatewayCode: bkash.code, gatewayTrxId: 'bfc2once99' }), 'GATEWAY_TRX_ID_TAKEN');
    expect(err.field).toBe('gateway_trx_id');
    expect(await transactionCount(same.payment_id)).toBe(0);
    // Another brand may claim it too (claims are per brand), but only one of them completes with it.
    const q = await createPayment(t, other.apiKey);
    const second = await startTransaction(em(), keys(), { paymentId: q.payment_id, gatewayCode: bkash.code, gatewayTrxId: 'bfc2once99' });
    await completeTransaction(em(), first.id, { source: 'admin' });
    await rejects(completeTransaction(em(), second.id, { source: 'admin' }), 'GATEWAY_TRX_ID_TAKEN');
    expect((await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [second.id]))[0]!.status).toBe('awaiting_verification');
    // Another gateway may have the same id.
    const nagad = await seedGateway(t, 'nagad');
    const r = await createPayment(t, other.apiKey);
    expect((await startTransaction(em(), keys(), { paymentId: r.payment_id, gatewayCode: nagad.code, gatewayTrxId: 'BFC2ONCE99' })).status).toBe('awaiting_verification');
  });

  it('refuses unknown, disabled gateways, methods they do not offer, malformed input and expired intents', async () => {
    const p = await createPayment(t, apiKey);
    await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: 'nope' }), 'GATEWAY_NOT_FOUND');
    const off = await seedGateway(t, 'bkash', { enabled: false });
    await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: off.code }), 'GATEWAY_UNAVAILABLE');
    expect((await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, method: 'card' }), 'VALIDATION_ERROR')).field).toBe('method');
    expect((await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, gatewayTrxId: 'has space' }), 'VALIDATION_ERROR')).field).toBe(
      'gateway_trx_id',
    );
    expect((await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, senderNumber: 'abc' }), 'VALIDATION_ERROR')).field).toBe(
      'sender_number',
    );
    await rejects(startTransaction(em(), keys(), { paymentId: '00000000-0000-4000-8000-000000000000', gatewayCode: bkash.code }), 'PAYMENT_NOT_FOUND');
    await rejects(startTransaction(em(), keys(), { paymentId: 'junk', gatewayCode: bkash.code }), 'PAYMENT_NOT_FOUND');
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [p.payment_id]);
    const expired = await rejects(startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code }), 'PAYMENT_EXPIRED');
    expect(expired.message).toBe('Payment link has expired');
    expect(await transactionCount(p.payment_id)).toBe(0);
  });

  it('stores the sender number encrypted, normalised to E.164', async () => {
    const p = await createPayment(t, apiKey);
    const tx = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, gatewayTrxId: 'SENDER0001', senderNumber: '017-1234-5679' });
    const [row] = await t.sql<{ sender_number_encrypted: string }>('SELECT sender_number_encrypted FROM transactions WHERE id = $1', [tx.id]);
    expect(row!.sender_number_encrypted).toMatch(/^v2\.k1\./);
    expect(row!.sender_number_encrypted).not.toContain('1712345679');
    // Read back as SMS matching reads it.
    expect(declaredPayerNumber(keys().pii, { ...tx, payerNumberEncrypted: row!.sender_number_encrypted })).toBe('+8801712345679');
  });
});

describe('transitions and their events', () => {
  it('completes once: a repeat changes nothing and records no second event', async () => {
    const { transaction } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification', gatewayTrxId: 'ONCE0001' });
    const first = await completeTransaction(em(), transaction.id, { source: 'sms' });
    expect(first).toMatchObject({ changed: true, transaction: { status: 'completed', completionSource: 'sms' } });
    const again = await completeTransaction(em(), transaction.id, { source: 'admin' });
    expect(again).toMatchObject({ changed: false, transaction: { status: 'completed', completionSource: 'sms' } });
    const evts = await events('payment.completed', transaction.trxId);
    expect(evts).toHaveLength(1);
    expect(evts[0].data).toMatchObject({ trx_id: transaction.trxId, amount: '500.00', currency: 'BDT', status: 'completed', gateway_trx_id: 'ONCE0001' });
    expect(evts[0].data).not.toHaveProperty('customer');
    const [intent] = await t.sql<{ status: string }>('SELECT status FROM payment_intents WHERE id = $1', [transaction.intentId]);
    expect(intent!.status).toBe('completed');
  });

  it('concurrent completions of one transaction: one change, one event', async () => {
    const { transaction } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification' });
    const results = await Promise.all(Array.from({ length: 8 }, () => completeTransaction(em(), transaction.id, { source: 'sms' })));
    expect(results.filter((r) => r.changed)).toHaveLength(1);
    expect(await events('payment.completed', transaction.trxId)).toHaveLength(1);
  });

  it('completion stores the gateway trx id it brings, and refuses a conflicting one', async () => {
    const { transaction } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'pending' });
    const done = await completeTransaction(em(), transaction.id, { source: 'sms', gatewayTrxId: 'FROMSMS01' });
    expect(done.transaction.gatewayTrxId).toBe('FROMSMS01');
    const other = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification', gatewayTrxId: 'MINE0001' });
    await rejects(completeTransaction(em(), other.transaction.id, { source: 'sms', gatewayTrxId: 'OTHER0001' }), 'INVALID_STATE');
    // The same id in another case is the same id.
    expect((await completeTransaction(em(), other.transaction.id, { source: 'sms', gatewayTrxId: 'mine0001' })).changed).toBe(true);
    const third = await seedTransaction(t, { apiKey, gateway: bkash, status: 'pending' });
    await rejects(completeTransaction(em(), third.transaction.id, { source: 'sms', gatewayTrxId: 'fromsms01' }), 'GATEWAY_TRX_ID_TAKEN');
    expect((await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [third.transaction.id]))[0]!.status).toBe('pending');
  });

  it('fails an open transaction with payment.failed; completed and failed ones do not move', async () => {
    const { transaction } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification' });
    const failed = await failTransaction(em(), transaction.id, { reason: 'SMS never arrived' });
    expect(failed).toMatchObject({ changed: true, transaction: { status: 'failed', failureReason: 'SMS never arrived' } });
    expect((await failTransaction(em(), transaction.id, { reason: 'again' })).changed).toBe(false);
    await rejects(completeTransaction(em(), transaction.id, { source: 'admin' }), 'INVALID_STATE');
    const evts = await events('payment.failed', transaction.trxId);
    expect(evts).toHaveLength(1);
    expect(evts[0].data).toMatchObject({ status: 'failed', failure_reason: 'SMS never arrived' });
    const done = await seedTransaction(t, { apiKey, gateway: bkash, status: 'completed' });
    await rejects(failTransaction(em(), done.transaction.id, { reason: 'late' }), 'INVALID_STATE');
    await rejects(completeTransaction(em(), 987654321, { source: 'admin' }), 'TRANSACTION_NOT_FOUND');
  });

  it('the payment.completed event is the payment as it reads after the completion, also converted and after a failed attempt', async () => {
    await seedRate(t, 'USD', 'BDT', '109.5');
    const p = await createPayment(t, apiKey, { amount: '3.00', currency: 'USD', metadata: { order: 'E-1', n: 2 } });
    // A failed attempt first: the event shows the intent's latest transaction.
    const failed = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, gatewayTrxId: null });
    await failTransaction(em(), failed.id, { reason: 'wrong number' });
    const tx = await startTransaction(em(), keys(), { paymentId: p.payment_id, gatewayCode: bkash.code, gatewayTrxId: null });
    const done = await completeTransaction(em(), tx.id, { source: 'sms', gatewayTrxId: 'EVTVIEW01' });
    const [evt] = await events('payment.completed', tx.trxId);
    const expected = await transaction(em(), (e) => paymentEventData(e, tx.intentId));
    expect(evt.data).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(evt.data).toMatchObject({ exchange_rate: '109.5', gateway_trx_id: 'EVTVIEW01', status: 'completed', metadata: { order: 'E-1', n: 2 } });
    expect(done.transaction).toEqual(await getTransaction(em(), tx.id));
  });

  it('a failing event write rolls the state change back (both or neither)', async () => {
    const { transaction } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification' });
    await t.sql('ALTER TABLE webhook_events RENAME TO webhook_events_gone');
    try {
      await expect(completeTransaction(em(), transaction.id, { source: 'sms' })).rejects.toThrow();
    } finally {
      await t.sql('ALTER TABLE webhook_events_gone RENAME TO webhook_events');
    }
    const [row] = await t.sql<{ status: string; completed_at: Date | null }>('SELECT status, completed_at FROM transactions WHERE id = $1', [transaction.id]);
    expect(row).toEqual({ status: 'awaiting_verification', completed_at: null });
    expect((await t.sql<{ status: string }>('SELECT status FROM payment_intents WHERE id = $1', [transaction.intentId]))[0]!.status).toBe('pending');
  });
});

describe('expiry', () => {
  it('expires due intents and their open transactions with one payment.expired each; completed ones stay', async () => {
    await expireDueIntents(em(), { limit: 1000 }); // earlier tests' due intents
    const bare = await createPayment(t, apiKey);
    const open = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification' });
    const done = await seedTransaction(t, { apiKey, gateway: bkash, status: 'completed' });
    const future = await createPayment(t, apiKey);
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 minute' WHERE uuid = ANY($1::uuid[])`, [
      [bare.payment_id, open.paymentId, done.paymentId],
    ]);
    expect(await expireDueIntents(em(), { limit: 100 })).toBe(2);
    expect(await expireDueIntents(em(), { limit: 100 })).toBe(0);
    const status = async (id: string) => (await t.request('GET', `/api/v1/payments/${id}`, { token: apiKey })).body.data.status;
    expect(await status(bare.payment_id)).toBe('expired');
    expect(await status(open.paymentId)).toBe('expired');
    expect(await status(done.paymentId)).toBe('completed');
    expect(await status(future.payment_id)).toBe('pending');
    const bareEvents = await events('payment.expired', bare.payment_id);
    expect(bareEvents).toHaveLength(1);
    expect(bareEvents[0].data).toMatchObject({ payment_id: bare.payment_id, trx_id: null, transaction_id: null, status: 'expired' });
    expect(await events('payment.expired', open.transaction.trxId)).toHaveLength(1);
    // An expired transaction cannot complete any more.
    await rejects(completeTransaction(em(), open.transaction.id, { source: 'sms' }), 'INVALID_STATE');
    await rejects(startTransaction(em(), keys(), { paymentId: bare.payment_id, gatewayCode: bkash.code }), 'PAYMENT_EXPIRED');
  });

  it('completion racing expiry: the payment ends consistent either way', async () => {
    for (let i = 0; i < 5; i++) {
      const { transaction, paymentId } = await seedTransaction(t, { apiKey, gateway: bkash, status: 'awaiting_verification' });
      await t.sql(`UPDATE payment_intents SET expires_at = now() WHERE uuid = $1`, [paymentId]);
      await Promise.allSettled([completeTransaction(em(), transaction.id, { source: 'sms' }), expireDueIntents(em())]);
      const [row] = await t.sql<{ i: string; t: string }>(
        'SELECT i.status AS i, t.status AS t FROM payment_intents i JOIN transactions t ON t.intent_id = i.id WHERE t.id = $1',
        [transaction.id],
      );
      expect([
        ['completed', 'completed'],
        ['expired', 'expired'],
      ]).toContainEqual([row!.i, row!.t]);
    }
  });
});

describe('gateway changes apply to new transactions only', () => {
  it('a fee change does not rewrite an existing transaction', async () => {
    const g = await seedGateway(t, 'bkash', { fee_percent: '2', fee_fixed: '5.00' });
    const { transaction } = await seedTransaction(t, { apiKey, gateway: g, amount: '100.00', status: 'awaiting_verification' });
    expect(transaction.fee).toBe('7.00');
    await updateGateway(em(), g.code, { fee_percent: '0' });
    const res = await t.request('GET', `/api/v1/payments/${transaction.paymentId}`, { token: apiKey });
    expect(res.body.data.fee).toBe('7.00');
  });
});
