import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { sendInvoice } from '../../../domain/invoices/mail.ts';
import {
  createInvoice, finalizeInvoice, getInvoice, listInvoices, updateInvoice, voidInvoice,
} from '../../../domain/invoices/service.ts';
import { merchantOf } from '../../context.ts';

const s = initServer();

export function merchantInvoiceHandlers(deps: AppDeps) {
  const base = deps.config.PUBLIC_BASE_URL;
  const keys = deps.crypto;
  return s.router(contract.merchant.invoices, {
    create: async ({ req, body }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 201, body: { success: true, data: await createInvoice(req.db, keys, brandId, mode, body, base) } };
    },
    list: async ({ req, query }) => {
      const { brandId, mode } = merchantOf(req);
      const { items, total } = await listInvoices(req.db, keys, { brandId, mode, status: query.status, customerUuid: query.customer_id }, query, base);
      const meta = { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) };
      return { status: 200, body: { success: true, data: items, meta } };
    },
    get: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: await getInvoice(req.db, keys, brandId, mode, params.id, base) } };
    },
    update: async ({ req, params, body }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: await updateInvoice(req.db, keys, brandId, mode, params.id, body, base) } };
    },
    finalize: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: await finalizeInvoice(req.db, keys, brandId, mode, params.id, base) } };
    },
    void: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: await voidInvoice(req.db, keys, brandId, mode, params.id, base) } };
    },
    send: async ({ req, params, body }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: await sendInvoice(req.db, deps, { brandId, mode }, params.id, body?.language) } };
    },
  });
}
