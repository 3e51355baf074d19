import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { findUnpaidPayments } from '../../../domain/payments/list.ts';
import { pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';

const s = initServer();

export const adminPaymentHandlers = s.router(contract.admin.payments, {
  listUnpaid: async ({ req, query }) => {
    const items = await findUnpaidPayments(req.db, { reference: query.reference, brandId: query.brand_id, brandIds: brandScopeOf(req.principal), mode: query.mode });
    return { status: 200, body: { success: true, data: items, meta: pageMeta(1, 20, items.length) } };
  },
});
