import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { Mode } from '../../../../contract/vocabulary.ts';
import type { AppDeps } from '../../../deps.ts';
import { adminCreateCustomer, adminListCustomers, adminEraseCustomer, adminUpdateCustomer, exportCustomers, importCustomers } from '../../../domain/customers/admin.ts';
import type { CustomerView } from '../../../domain/customers/service.ts';
import { maskEmail, maskPhone } from '../../../domain/customers/normalize.ts';
import { adminActor, pageMeta } from './actor.ts';

const s = initServer();

const customerBody = (c: Pick<CustomerView, 'id' | 'uuid' | 'name' | 'createdAt'> & { emailMasked: string | null; phoneMasked: string | null }, brandId: number, mode: Mode) => ({
  id: c.id,
  uuid: c.uuid,
  brand_id: brandId,
  mode,
  name: c.name,
  email_masked: c.emailMasked,
  phone_masked: c.phoneMasked,
  created_at: c.createdAt.toISOString(),
});

const masked = (c: CustomerView) => ({ ...c, emailMasked: c.email === null ? null : maskEmail(c.email), phoneMasked: c.phone === null ? null : maskPhone(c.phone) });

export function adminCustomerHandlers(deps: AppDeps) {
  return s.router(contract.admin.customers, {
    list: async ({ req, params, query }) => {
      const { items, total } = await adminListCustomers(req.db, deps.crypto, params.brand_id, query.mode, { page: query.page, perPage: query.per_page });
      return {
        status: 200,
        body: { success: true, data: items.map((c) => customerBody(c, params.brand_id, query.mode)), meta: pageMeta(query.page, query.per_page, total) },
      };
    },
    create: async ({ req, params, body }) => {
      const { mode, ...input } = body;
      const c = await adminCreateCustomer(req.db, deps.crypto, adminActor(req), params.brand_id, mode, input);
      return { status: 201, body: { success: true, data: customerBody(masked(c), params.brand_id, mode) } };
    },
    update: async ({ req, params, body }) => {
      const c = await adminUpdateCustomer(req.db, deps.crypto, adminActor(req), params.customer_id, body);
      return { status: 200, body: { success: true, data: customerBody(masked(c), c.brandId, c.mode) } };
    },
    delete: async ({ req, params }) => {
      await adminEraseCustomer(req.db, deps.crypto, adminActor(req), params.customer_id);
      return { status: 204, body: undefined };
    },
    import: async ({ req, params, body }) => {
      const r = await importCustomers(req.db, deps.crypto, adminActor(req), params.brand_id, body.mode, body.csv, { dryRun: body.dry_run });
      return { status: 200, body: { success: true, data: { dry_run: r.dryRun, total_rows: r.totalRows, accepted: r.accepted, refused: r.refused } } };
    },
    export: async ({ req, params, body }) => {
      const { csv, count } = await exportCustomers(req.db, deps.crypto, adminActor(req), params.brand_id, body.mode);
      const filename = `customers-brand-${params.brand_id}-${body.mode}-${new Date().toISOString().slice(0, 10)}.csv`;
      return { status: 200, body: { success: true, data: { filename, count, csv } } };
    },
  });
}
