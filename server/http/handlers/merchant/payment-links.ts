import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { createPaymentLink, deactivatePaymentLink, getPaymentLink, listPaymentLinks } from '../../../domain/payment-links/service.ts';
import { merchantOf } from '../../context.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export function merchantPaymentLinkHandlers(deps: AppDeps) {
  const base = deps.config.PUBLIC_BASE_URL;
  return s.router(contract.merchant.paymentLinks, {
    create: async ({ req, body }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 201, body: { success: true, data: await createPaymentLink(req.db, brandId, mode, body, base) } };
    },
    list: async ({ req, query }) => {
      const { brandId, mode } = merchantOf(req);
      const { items, total } = await lagTolerant(req, (db) => listPaymentLinks(db, brandId, mode, query, base));
      const meta = { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) };
      return { status: 200, body: { success: true, data: items, meta } };
    },
    get: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: await getPaymentLink(req.db, brandId, mode, params.id, base) } };
    },
    deactivate: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: await deactivatePaymentLink(req.db, brandId, mode, params.id, base) } };
    },
  });
}
