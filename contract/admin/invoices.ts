import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, okList, pageMetaWithPagesSchema, pageQuerySchema, uuidSchema } from '../common/index.ts';
import { invoicePaymentSchema, invoiceSchema } from '../merchant/invoices.ts';
import { invoiceStatuses } from '../vocabulary.ts';
import { adminMeta, adminRouterOptions, brandFilter, modeField, modeFilter } from './shared.ts';

const c = initContract();

export const adminInvoiceSchema = invoiceSchema
  .extend({
    brand_id: z.number().int().describe('The brand that issued it.'),
    brand_name: z.string().describe("The brand's name."),
    mode: modeField,
  })
  .meta({ id: 'AdminInvoice' });

export const adminInvoiceDetailSchema = adminInvoiceSchema
  .extend({ payments: z.array(invoicePaymentSchema).describe('Payments made from its hosted page, newest first.') })
  .meta({ id: 'AdminInvoiceDetail' });

const invoicePath = z.object({ invoice_id: uuidSchema.describe('Invoice id (UUID).') });

export const adminInvoicesContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/invoices',
      summary: 'List invoices',
      description: "Invoices of every brand in the caller's brand scope, newest first, filtered by brand, mode, status or customer.",
      query: z.strictObject({
        ...pageQuerySchema.shape,
        brand_id: brandFilter,
        mode: modeFilter,
        status: z.enum(invoiceStatuses).optional().describe('Only invoices in this status.'),
        customer_id: uuidSchema.optional().describe("Only this customer's invoices (its `uuid`)."),
      }),
      responses: { 200: okList(adminInvoiceSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Invoices'),
    },
    get: {
      method: 'GET',
      path: '/invoices/:invoice_id',
      summary: 'Get an invoice with its payments',
      description: "`INVOICE_NOT_FOUND` for an unknown id or a brand outside the caller's scope.",
      pathParams: invoicePath,
      responses: { 200: ok(adminInvoiceDetailSchema) },
      metadata: adminMeta('Invoices', ['INVOICE_NOT_FOUND']),
    },
    void: {
      method: 'POST',
      path: '/invoices/:invoice_id/void',
      summary: 'Void an invoice',
      description: 'As the merchant API does (sends `invoice.voided`), audited as `invoice.void`. A paid invoice is `INVOICE_ALREADY_PAID`.',
      pathParams: invoicePath,
      body: z.strictObject({}).optional(),
      responses: { 200: ok(adminInvoiceDetailSchema) },
      metadata: adminMeta('Invoices', ['INVOICE_NOT_FOUND', 'INVOICE_ALREADY_PAID']),
    },
    resend: {
      method: 'POST',
      path: '/invoices/:invoice_id/resend',
      summary: 'E-mail an invoice to its customer again',
      description: 'As `POST /api/v1/invoices/{id}/send`, audited as `invoice.resend`.',
      pathParams: invoicePath,
      body: z.strictObject({}).optional(),
      responses: { 200: ok(adminInvoiceDetailSchema) },
      metadata: adminMeta('Invoices', ['INVOICE_NOT_FOUND', 'INVOICE_VOID', 'SERVICE_UNAVAILABLE']),
    },
  },
  adminRouterOptions,
);

export type AdminInvoiceResource = z.infer<typeof adminInvoiceSchema>;
export type AdminInvoiceDetailResource = z.infer<typeof adminInvoiceDetailSchema>;
