import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { getAdminInvoice, listAdminInvoices, resendInvoiceAudited, voidInvoiceAudited } from '../../../domain/invoices/admin.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { adminActor, pageMeta } from './actor.ts';

const s = initServer();

export function adminInvoiceHandlers(deps: AppDeps) {
  const base = deps.config.PUBLIC_BASE_URL;
  return s.router(contract.admin.invoices, {
    list: async ({ req, query }) => {
      const { items, total } = await listAdminInvoices(req.db, deps.crypto, {
        page: query.page, per_page: query.per_page, brandId: query.brand_id, brandIds: brandScopeOf(req.principal), mode: query.mode, status: query.status, customerUuid: query.customer_id,
      }, base);
      return { status: 200, body: { success: true, data: items, meta: pageMeta(query.page, query.per_page, total) } };
    },
    get: async ({ req, params }) => ({ status: 200, body: { success: true, data: await getAdminInvoice(req.db, deps.crypto, brandScopeOf(req.principal), params.invoice_id, base) } }),
    void: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: await voidInvoiceAudited(req.db, deps.crypto, adminActor(req), brandScopeOf(req.principal), params.invoice_id, base) },
    }),
    resend: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: await resendInvoiceAudited(req.db, deps, adminActor(req), brandScopeOf(req.principal), params.invoice_id) },
    }),
  });
}
