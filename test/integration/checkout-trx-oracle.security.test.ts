import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { completeTransaction } from '../../server/domain/payments/transactions.ts';
import { AppError } from '../../contract/common/errors.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { newGatewayTrxId } from '../support/sms-matching.ts';

/**
 * The checkout must not be an oracle on gateway transaction ids: another
 * brand's claims are never revealed (the submission waits for verification
 * like any other), and GATEWAY_TRX_ID_TAKEN for the brand's own claims is
 * answered a few times per payment only, counted in the database, then every
 * submission on that payment is refused alike. One gateway transaction still
 * completes one payment only.
 */

let t: TestContext;
let shopA: string;
let shopB: string;
let bkash: GatewayView;

const api = (id: string) => `/api/checkout/v1/payments/${id}`;
const em = () => t.runtime.deps.db;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey: shopA } = await t.createBrand('Shop A'));
  ({ apiKey: shopB } = await t.createBrand('Shop B'));
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const payment = async (key: string): Promise<string> => (await createPayment(t, key, { reference: null })).payment_id;

const pay = (paymentId: string, trxId: string) => t.request('POST', `${api(paymentId)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: trxId } });

async function transactionOf(paymentId: string): Promise<{ id: number; status: string } | null> {
  const [r] = await t.sql<{ id: string; status: string }>('SELECT t.id, t.status FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1', [paymentId]);
  return r ? { id: Number(r.id), status: r.status } : null;
}

const shape = (body: any) => ({ ...body.data, trx_id: '*', created_at: '*', gateway_trx_id: '*' });

describe("another brand's claim", () => {
  it('is not revealed: the submission is taken like a fresh id, and still only one payment can complete with it', async () => {
    const claimed = newGatewayTrxId();
    const a = await payment(shopA);
    expect((await pay(a, claimed)).status).toBe(201);

    const b = await payment(shopB);
    const atB = await pay(b, claimed.toLowerCase());
    const fresh = await pay(await payment(shopB), newGatewayTrxId());
    expect(atB.status, JSON.stringify(atB.body)).toBe(201);
    expect(shape(atB.body)).toEqual(shape(fresh.body));
    expect(atB.body.data).toMatchObject({ status: 'awaiting_verification', gateway_trx_id_changes_left: 3 });

    // Both claim it; the database lets only one of them complete with it.
    const ta = (await transactionOf(a))!;
    const tb = (await transactionOf(b))!;
    await completeTransaction(em(), ta.id, { source: 'admin' });
    const err = await completeTransaction(em(), tb.id, { source: 'admin' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('GATEWAY_TRX_ID_TAKEN');
    expect((await transactionOf(b))!.status).toBe('awaiting_verification');
  });
});

describe("the brand's own claims", () => {
  it('are answered GATEWAY_TRX_ID_TAKEN 3 times per payment, then every submission is SUBMISSION_LIMIT_REACHED', async () => {
    const taken = [newGatewayTrxId(), newGatewayTrxId(), newGatewayTrxId(), newGatewayTrxId()];
    for (const id of taken) expect((await pay(await payment(shopA), id)).status).toBe(201);

    const probe = await payment(shopA);
    for (const id of taken.slice(0, 3)) {
      const res = await pay(probe, id);
      expect(res.status).toBe(409);
      expect(res.body.errors[0]).toMatchObject({ code: 'GATEWAY_TRX_ID_TAKEN', field: 'gateway_trx_id' });
    }
    // Past the bound, a taken id and a free one get the same refusal.
    for (const id of [taken[3]!, newGatewayTrxId()]) {
      const res = await pay(probe, id);
      expect(res.status, JSON.stringify(res.body)).toBe(429);
      expect(res.body.errors[0]).toMatchObject({ code: 'SUBMISSION_LIMIT_REACHED', field: 'gateway_trx_id' });
    }
    expect(await transactionOf(probe)).toBeNull();
    const [count] = await t.sql<{ taken_answers: number }>(
      'SELECT c.taken_answers FROM checkout_submission_counts c JOIN payment_intents i ON i.id = c.intent_id WHERE i.uuid = $1',
      [probe],
    );
    expect(count!.taken_answers).toBe(3);
    // The bound is per payment: another link of the brand still answers.
    expect((await pay(await payment(shopA), taken[3]!)).status).toBe(409);
  });

  it('hold under concurrent probes: never more than 3 taken answers for one payment', async () => {
    const taken = newGatewayTrxId();
    expect((await pay(await payment(shopA), taken)).status).toBe(201);
    const probe = await payment(shopA);
    const answers = await Promise.all(Array.from({ length: 10 }, () => pay(probe, taken)));
    const codes = answers.map((r) => r.body.errors[0].code);
    expect(codes.filter((c) => c === 'GATEWAY_TRX_ID_TAKEN')).toHaveLength(3);
    expect(codes.filter((c) => c === 'SUBMISSION_LIMIT_REACHED')).toHaveLength(7);
  });

  it('replacements count toward the same bound', async () => {
    const taken = [newGatewayTrxId(), newGatewayTrxId(), newGatewayTrxId()];
    for (const id of taken) expect((await pay(await payment(shopA), id)).status).toBe(201);
    const p = await payment(shopA);
    expect((await pay(p, newGatewayTrxId())).status).toBe(201);
    for (const id of taken) {
      const res = await t.request('PUT', `${api(p)}/transaction/gateway-trx-id`, { body: { gateway_trx_id: id } });
      expect(res.body.errors[0].code).toBe('GATEWAY_TRX_ID_TAKEN');
    }
    const res = await t.request('PUT', `${api(p)}/transaction/gateway-trx-id`, { body: { gateway_trx_id: newGatewayTrxId() } });
    expect(res.status).toBe(429);
    expect(res.body.errors[0].code).toBe('SUBMISSION_LIMIT_REACHED');
    expect((await t.request('GET', api(p))).body.data.transaction.gateway_trx_id_changes_left).toBe(0);
  });
});
