import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import {
  getAdminTransactionDetail,
  listAdminTransactions,
  rejectTransactionAudited,
  verifyTransactionAudited,
} from '../../../domain/payments/admin.ts';
import { getTransactionTimeline } from '../../../domain/payments/timeline.ts';
import { adminActor, pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import type { AppDeps } from '../../../deps.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const adminTransactionHandlers = (deps: Pick<AppDeps, 'crypto'>) => s.router(contract.admin.transactions, {
  list: async ({ req, query }) => {
    const { items, total } = await lagTolerant(req, (db) => listAdminTransactions(db, deps.crypto, {
      page: query.page,
      perPage: query.per_page,
      brandId: query.brand_id,
      brandIds: brandScopeOf(req.principal),
      mode: query.mode,
      status: query.status,
      gateway: query.gateway,
      trxId: query.trx_id,
      reference: query.reference,
      customerEmail: query.customer_email,
      customerPhone: query.customer_phone,
      from: query.from,
      to: query.to,
    }));
    return { status: 200, body: { success: true, data: items, meta: pageMeta(query.page, query.per_page, total) } };
  },
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await getAdminTransactionDetail(req.db, deps.crypto, params.transaction_id) } };
  },
  timeline: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await getTransactionTimeline(req.db, params.transaction_id) } };
  },
  verify: async ({ req, params, body }) => {
    const t = await verifyTransactionAudited(req.db, deps.crypto, adminActor(req), params.transaction_id, {
      smsRecordId: body.sms_record_id,
      note: body.note,
      acceptAmountDifference: body.accept_amount_difference,
      correctTrxId: body.correct_trx_id,
    });
    return { status: 200, body: { success: true, data: t } };
  },
  reject: async ({ req, params, body }) => {
    const t = await rejectTransactionAudited(req.db, deps.crypto, adminActor(req), params.transaction_id, { reason: body.reason });
    return { status: 200, body: { success: true, data: t } };
  },
});
