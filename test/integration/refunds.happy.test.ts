import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { requestRefund, seedCompletedTransaction, seedGateway, settleRefund } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { completeRefund, failRefund } from '../../server/domain/refunds/service.ts';
import { AppError } from '../../contract/common/errors.ts';

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('Refund Shop'));
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const em = () => t.runtime.deps.db;
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /api/v1/refunds', () => {
  it('creates a pending refund of a completed transaction', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '800.00', gatewayTrxId: 'RFD0000001' });
    const res = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '300.00', reason: ' Customer returned the item ' });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      transaction_id: transaction.id,
      trx_id: transaction.trxId,
      gateway_trx_id: 'RFD0000001',
      amount: '300.00',
      currency: 'BDT',
      reason: 'Customer returned the item',
      status: 'pending',
      failure_reason: null,
      processed_at: null,
      created_at: expect.stringMatching(ISO_Z),
      livemode: true,
    });
  });

  it('takes the gateway reference too, in any case', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, gatewayTrxId: 'GwRef0002' });
    const res = await requestRefund(t, apiKey, { trx_id: 'gwref0002', amount: '1.00' });
    expect(res.status).toBe(201);
    expect(res.body.data.transaction_id).toBe(transaction.id);
  });

  it('allows several refunds up to exactly the amount; failed ones free their amount again', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '100.00' });
    const a = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '60.00' });
    const b = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '40.00' });
    expect([a.status, b.status]).toEqual([201, 201]);
    const over = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '0.01' });
    expect(over.status).toBe(422);
    expect(over.body.errors[0]).toEqual({
      code: 'REFUND_EXCEEDS_AVAILABLE',
      field: 'amount',
      message: 'Refund amount exceeds the refundable amount (0.00 BDT left)',
    });
    await settleRefund(t, a.body.data.id, 'failed');
    const again = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '60.00' });
    expect(again.status).toBe(201);
  });
});

describe('completing and failing refunds', () => {
  it('pending -> completed records refund.completed once; a failed refund cannot complete', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash });
    const created = (await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '10.00' })).body.data;
    const done = await completeRefund(em(), created.id);
    expect(done).toMatchObject({ changed: true, refund: { status: 'completed', processed_at: expect.stringMatching(ISO_Z) } });
    expect((await completeRefund(em(), created.id)).changed).toBe(false);
    const rows = await t.sql<{ payload: string; transaction_id: string }>(`SELECT payload, transaction_id FROM webhook_events WHERE event = 'refund.completed'`);
    const mine = rows.map((r) => ({ ...JSON.parse(r.payload), tid: Number(r.transaction_id) })).filter((e) => e.data.uuid === created.uuid);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ tid: transaction.id, data: { id: created.id, trx_id: transaction.trxId, amount: '10.00', status: 'completed' } });

    const other = (await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '5.00' })).body.data;
    const failed = await failRefund(em(), other.id, { reason: 'Wallet rejected the reversal' });
    expect(failed.refund).toMatchObject({ status: 'failed', failure_reason: 'Wallet rejected the reversal' });
    const err = await completeRefund(em(), other.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INVALID_STATE');
    const failedEvents = await t.sql(`SELECT 1 FROM webhook_events WHERE event = 'refund.failed' AND (payload::jsonb)->'data'->>'uuid' = $1`, [other.uuid]);
    expect(failedEvents).toHaveLength(1);
  });
});

describe('GET /api/v1/refunds/{trx_id}', () => {
  it('returns the latest refund by service or gateway reference', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, gatewayTrxId: 'LATEST0001' });
    await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '1.00' });
    const last = (await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '2.00' })).body.data;
    for (const ref of [transaction.trxId, 'LATEST0001', 'latest0001']) {
      const res = await t.request('GET', `/api/v1/refunds/${ref}`, { token: apiKey });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(last);
    }
  });
});

describe('GET /api/v1/refunds', () => {
  let trxA: { id: number; trxId: string };
  let trxB: { id: number; trxId: string };
  let listKey: string;

  beforeAll(async () => {
    // A brand of its own, so counts are exact.
    ({ apiKey: listKey } = await t.createBrand('List Shop'));
    trxA = (await seedCompletedTransaction(t, { apiKey: listKey, gateway: bkash, amount: '1000.00', gatewayTrxId: 'LISTA00001' })).transaction;
    trxB = (await seedCompletedTransaction(t, { apiKey: listKey, gateway: bkash, amount: '1000.00' })).transaction;
    // Seven refunds at fixed times around a UTC day boundary.
    const times = [
      '2026-02-28T23:59:59.999Z',
      '2026-03-01T00:00:00.000Z',
      '2026-03-01T12:00:00.000Z',
      '2026-03-01T23:59:59.999Z',
      '2026-03-02T00:00:00.000Z',
      '2026-03-05T08:00:00.000Z',
      '2026-03-09T08:00:00.000Z',
    ];
    for (const [i, at] of times.entries()) {
      const trx = i < 4 ? trxA : trxB;
      const r = await requestRefund(t, listKey, { trx_id: trx.trxId, amount: `${i + 1}.00` });
      expect(r.status).toBe(201);
      await t.sql('UPDATE refunds SET created_at = $1 WHERE id = $2', [at, r.body.data.id]);
      if (i === 2) await settleRefund(t, r.body.data.id, 'completed');
      if (i === 5) await settleRefund(t, r.body.data.id, 'failed');
    }
  });

  const list = async (qs: string) => t.request('GET', `/api/v1/refunds${qs}`, { token: listKey });
  const amounts = (res: { body: any }) => res.body.data.map((r: { amount: string }) => r.amount);

  it('lists newest first with meta {page, per_page, total, total_pages}', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(amounts(res)).toEqual(['7.00', '6.00', '5.00', '4.00', '3.00', '2.00', '1.00']);
    expect(res.body.meta).toEqual({ page: 1, per_page: 20, total: 7, total_pages: 1 });
  });

  it('pages: per_page 1, the last page, and past the end', async () => {
    const first = await list('?per_page=1');
    expect(amounts(first)).toEqual(['7.00']);
    expect(first.body.meta).toEqual({ page: 1, per_page: 1, total: 7, total_pages: 7 });
    expect(amounts(await list('?per_page=1&page=7'))).toEqual(['1.00']);
    const past = await list('?per_page=1&page=8');
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.meta).toEqual({ page: 8, per_page: 1, total: 7, total_pages: 7 });
    expect(amounts(await list('?per_page=3&page=3'))).toEqual(['1.00']);
    const hundred = await list('?per_page=100');
    expect(hundred.body.meta).toEqual({ page: 1, per_page: 100, total: 7, total_pages: 1 });
  });

  it('from/to are inclusive UTC dates', async () => {
    const day = await list('?from=2026-03-01&to=2026-03-01');
    expect(amounts(day)).toEqual(['4.00', '3.00', '2.00']);
    expect(day.body.meta.total).toBe(3);
    expect(amounts(await list('?from=2026-03-02'))).toEqual(['7.00', '6.00', '5.00']);
    expect(amounts(await list('?to=2026-02-28'))).toEqual(['1.00']);
    expect(amounts(await list('?from=2026-03-03&to=2026-03-08'))).toEqual(['6.00']);
    expect((await list('?from=2027-01-01')).body).toMatchObject({ data: [], meta: { total: 0, total_pages: 0 } });
  });

  it('filters by status, trx_id (either reference) and transaction_id, combined with paging', async () => {
    expect(amounts(await list('?status=completed'))).toEqual(['3.00']);
    expect(amounts(await list('?status=failed'))).toEqual(['6.00']);
    expect(amounts(await list('?status=pending'))).toEqual(['7.00', '5.00', '4.00', '2.00', '1.00']);
    expect(amounts(await list(`?trx_id=${trxB.trxId}`))).toEqual(['7.00', '6.00', '5.00']);
    expect(amounts(await list('?trx_id=lista00001'))).toEqual(['4.00', '3.00', '2.00', '1.00']);
    expect(amounts(await list(`?transaction_id=${trxA.id}&status=pending&per_page=2&page=2`))).toEqual(['1.00']);
    const none = await list('?trx_id=TRXDOESNOTEXIST');
    expect(none.body).toMatchObject({ data: [], meta: { total: 0 } });
  });
});
