import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { createRefund, getLatestRefund, listRefunds } from '../../../domain/refunds/service.ts';
import { merchantOf } from '../../context.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const merchantRefundHandlers = s.router(contract.merchant.refunds, {
  create: async ({ req, body }) => {
    const { brandId, mode } = merchantOf(req);
    const target = body.payment_id !== undefined ? { paymentId: body.payment_id } : { trxId: body.trx_id! };
    const refund = await createRefund(req.db, brandId, mode, { ...target, amount: body.amount, reason: body.reason });
    return { status: 201, body: { success: true, data: { ...refund, livemode: mode === 'live' } } };
  },
  list: async ({ req, query }) => {
    const { brandId, mode } = merchantOf(req);
    const { items, total } = await lagTolerant(req, (db) => listRefunds(db, brandId, mode, {
      page: query.page,
      perPage: query.per_page,
      status: query.status,
      trxId: query.trx_id,
      transactionId: query.transaction_id,
      from: query.from,
      to: query.to,
    }));
    const meta = { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) };
    return { status: 200, body: { success: true, data: items.map((r) => ({ ...r, livemode: mode === 'live' })), meta } };
  },
  get: async ({ req, params }) => {
    const { brandId, mode } = merchantOf(req);
    const refund = await getLatestRefund(req.db, brandId, mode, params.trx_id);
    return { status: 200, body: { success: true, data: { ...refund, livemode: mode === 'live' } } };
  },
});
