import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { completeRefundAudited, failRefundAudited, getAdminRefund, listAdminRefunds } from '../../../domain/refunds/admin.ts';
import { adminActor, pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const adminRefundHandlers = s.router(contract.admin.refunds, {
  list: async ({ req, query }) => {
    const { items, total } = await lagTolerant(req, (db) => listAdminRefunds(db, {
      page: query.page,
      perPage: query.per_page,
      brandId: query.brand_id,
      brandIds: brandScopeOf(req.principal),
      mode: query.mode,
      status: query.status,
      trxId: query.trx_id,
      transactionId: query.transaction_id,
      from: query.from,
      to: query.to,
    }));
    return { status: 200, body: { success: true, data: items, meta: pageMeta(query.page, query.per_page, total) } };
  },
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await getAdminRefund(req.db, params.refund_id) } };
  },
  complete: async ({ req, params, body }) => {
    const data = await completeRefundAudited(req.db, adminActor(req), params.refund_id, { reference: body?.reference, note: body?.note });
    return { status: 200, body: { success: true, data } };
  },
  fail: async ({ req, params, body }) => {
    return { status: 200, body: { success: true, data: await failRefundAudited(req.db, adminActor(req), params.refund_id, body.reason) } };
  },
});
