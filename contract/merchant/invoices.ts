import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { invoiceStatuses } from '../vocabulary.ts';
import {
  amountInputSchema,
  amountSchema,
  currencySchema,
  dateQuery,
  livemodeSchema,
  meta,
  ok,
  okList,
  pageMetaWithPagesSchema,
  pageQuerySchema,
  timestampSchema,
  uuidSchema,
} from '../common/index.ts';
import { paymentCustomerInputSchema } from './payments.ts';

const c = initContract();

/** A quantity: up to 9 integer digits and 3 decimals, above zero (1, 2.5, 0.125). */
const quantitySchema = z
  .string()
  .regex(/^\d{1,9}(?:\.\d{1,3})?$/, 'Quantity must be a decimal string with at most 3 decimal places, e.g. "2" or "1.5"')
  .refine((s) => /[1-9]/.test(s), 'Quantity must be greater than zero')
  .describe('How many units: a decimal string with up to 3 decimal places, greater than zero.')
  .meta({ examples: ['2'] });

/** A tax rate in percent: 0 to 100, up to 3 decimals. */
const rateSchema = z
  .string()
  .regex(/^\d{1,3}(?:\.\d{1,3})?$/, 'Rate must be a percentage as a decimal string, e.g. "15" or "7.5"')
  .refine((s) => Number(s) <= 100, 'Rate must be at most 100')
  .describe('Percentage, as a decimal string ("15" is 15 %).')
  .meta({ examples: ['15'] });

export const invoiceLineInputSchema = z
  .strictObject({
    description: z.string().trim().min(1).max(500).describe('What is charged for; shown on the hosted page and the PDF (any script, Bangla included).'),
    quantity: quantitySchema,
    unit_price: amountInputSchema.describe('Price of one unit, decimal string with two places.'),
  })
  .meta({ id: 'InvoiceLineInput' });

const invoiceInputShape = {
  lines: z.array(invoiceLineInputSchema).min(1).max(100).describe('Line items, 1 to 100, in the order shown. Each line\'s amount is quantity × unit price, rounded half-up to two places.'),
  discount: z
    .strictObject({
      description: z.string().trim().min(1).max(200).optional().describe('Shown beside the discount. Default "Discount".'),
      amount: amountInputSchema.describe('Fixed amount taken off the subtotal; at most the subtotal.'),
    })
    .optional()
    .describe('An optional discount, taken off the subtotal before tax.'),
  tax: z
    .strictObject({
      description: z.string().trim().min(1).max(200).optional().describe('Shown beside the tax (e.g. "VAT 15%"). Default "Tax".'),
      rate: rateSchema,
    })
    .optional()
    .describe('An optional tax: `rate` percent of (subtotal − discount), rounded half-up to two places.'),
  currency: currencySchema.describe('ISO 4217 currency of every amount of the invoice; a gateway must take it (directly or through an exchange rate).'),
  due_date: dateQuery('Due date (YYYY-MM-DD). Once it has passed in the brand\'s time zone an open invoice becomes `overdue` (still payable).'),
  memo: z.string().trim().min(1).max(1000).optional().describe('A note to the customer, shown on the hosted page and the PDF.'),
};

export const createInvoiceBodySchema = z
  .strictObject({
    customer_id: uuidSchema.optional().describe('An existing customer of your brand and mode, by its `uuid`. Exclusive with `customer`.'),
    customer: paymentCustomerInputSchema
      .optional()
      .describe('The customer by email and/or phone (found, or created like `POST /api/v1/payments` does). Exclusive with `customer_id`; one of the two is required.'),
    ...invoiceInputShape,
    status: z.enum(['draft', 'open']).optional().describe('`draft` (default): editable, not payable yet; `open`: finalized at once (its hosted page takes payments).'),
  })
  .meta({ id: 'CreateInvoiceRequest' });

export const updateInvoiceBodySchema = z
  .strictObject({
    lines: invoiceInputShape.lines.optional(),
    discount: invoiceInputShape.discount.nullable().describe('A discount, or null to remove it.'),
    tax: invoiceInputShape.tax.nullable().describe('A tax, or null to remove it.'),
    currency: invoiceInputShape.currency.optional(),
    due_date: invoiceInputShape.due_date.optional(),
    memo: invoiceInputShape.memo.nullable().describe('A memo, or null to remove it.'),
  })
  .meta({ id: 'UpdateInvoiceRequest' });

export const invoiceLineSchema = z
  .object({
    description: z.string().describe('What is charged for.'),
    quantity: z.string().describe('How many units (decimal string).'),
    unit_price: amountSchema.describe('Price of one unit.'),
    amount: amountSchema.describe('quantity × unit price, rounded half-up to two places.'),
  })
  .meta({ id: 'InvoiceLine' });

const adjustmentSchema = z.object({
  description: z.string().describe('Shown beside the amount.'),
  rate: z.string().nullable().describe('Tax: the percentage; discount: null.'),
  amount: amountSchema.describe('The amount taken off (discount) or added (tax).'),
});

export const invoiceSchema = z
  .object({
    id: uuidSchema.describe("The invoice's id in this API."),
    number: z.string().describe('The invoice number, per brand and mode, gap-free: `INV-0001`, `INV-0002`, ….'),
    status: z.enum(invoiceStatuses).describe('`draft`, `open`, `overdue` (open and past due), `paid` or `void`.'),
    customer_id: uuidSchema.describe("The customer's `uuid`."),
    customer_name: z.string().nullable().describe("The customer's name, when known."),
    currency: currencySchema,
    lines: z.array(invoiceLineSchema).describe('Line items in order.'),
    discount: adjustmentSchema.nullable().describe('The discount, if any.'),
    tax: adjustmentSchema.nullable().describe('The tax, if any.'),
    subtotal: amountSchema.describe('Sum of the line amounts.'),
    total: amountSchema.describe('subtotal − discount + tax: what the customer owes in all.'),
    amount_paid: amountSchema.describe('Sum of the completed payments made for the invoice.'),
    amount_remaining: amountSchema.describe('total − amount paid, never below zero: what the hosted page asks for.'),
    due_date: z.string().describe('Due date (YYYY-MM-DD).'),
    memo: z.string().nullable().describe('Note to the customer.'),
    hosted_url: z.string().describe('The hosted invoice page (`/invoices/<token>`): the token is unguessable and is the page\'s only credential. A draft\'s page is not found until it is finalized.'),
    pdf_url: z.string().describe('The invoice as a PDF (the hosted page\'s download; same credential).'),
    finalized_at: timestampSchema.nullable().describe('When it became `open`.'),
    paid_at: timestampSchema.nullable().describe('When payments reached the total.'),
    voided_at: timestampSchema.nullable().describe('When it was voided.'),
    last_sent_at: timestampSchema.nullable().describe('When it was last e-mailed to the customer.'),
    created_at: timestampSchema,
    livemode: livemodeSchema,
  })
  .meta({ id: 'Invoice' });

export const invoicePaymentSchema = z
  .object({
    payment_id: uuidSchema.describe('The payment (`GET /api/v1/payments/{payment_id}`).'),
    amount: amountSchema.describe('Amount asked for, in the invoice currency.'),
    status: z.string().describe('The payment intent status: `pending`, `completed`, `expired`, `canceled`.'),
    created_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
  })
  .meta({ id: 'InvoicePayment' });

export const invoiceDetailSchema = invoiceSchema
  .extend({ payments: z.array(invoicePaymentSchema).describe('The payments made from its hosted page, newest first (completed ones count towards `amount_paid`).') })
  .meta({ id: 'InvoiceDetail' });

export type InvoiceResource = z.infer<typeof invoiceSchema>;
export type InvoiceDetailResource = z.infer<typeof invoiceDetailSchema>;
export type InvoicePaymentResource = z.infer<typeof invoicePaymentSchema>;
export type CreateInvoiceBody = z.infer<typeof createInvoiceBodySchema>;
export type UpdateInvoiceBody = z.infer<typeof updateInvoiceBodySchema>;

const idParams = z.object({ id: z.string().describe('Invoice id (UUID).') });
const keyed = ['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS'] as const;

export const invoicesContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/invoices',
      summary: 'Create an invoice',
      description:
        'An invoice for a customer (by `customer_id`, or found or created by email/phone), with its next number, totals computed by the service, ' +
        'a hosted page and a PDF. `draft` by default; `status: "open"` finalizes it at once. Sends `invoice.created`. Honours `Idempotency-Key`.',
      body: createInvoiceBodySchema,
      responses: { 201: ok(invoiceSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Invoices', idempotent: true, errors: ['CUSTOMER_NOT_FOUND', 'CURRENCY_NOT_SUPPORTED', ...keyed] }),
    },
    list: {
      method: 'GET',
      path: '/invoices',
      summary: 'List invoices',
      description: 'Invoices of the calling brand and mode, newest first.',
      query: z.strictObject({
        ...pageQuerySchema.shape,
        status: z.enum(invoiceStatuses).optional().describe('Only invoices in this status.'),
        customer_id: uuidSchema.optional().describe("Only this customer's invoices (its `uuid`)."),
      }),
      responses: { 200: okList(invoiceSchema, pageMetaWithPagesSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Invoices' }),
    },
    get: {
      method: 'GET',
      path: '/invoices/:id',
      summary: 'Get an invoice with its payments',
      description: "One invoice of the calling brand and mode, with the payments made from its hosted page. `INVOICE_NOT_FOUND` for an unknown id, another brand's invoice or one of the other mode.",
      pathParams: idParams,
      responses: { 200: ok(invoiceDetailSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Invoices', errors: ['INVOICE_NOT_FOUND'] }),
    },
    update: {
      method: 'PATCH',
      path: '/invoices/:id',
      summary: 'Update a draft invoice',
      description: 'Changes the fields given; totals are computed again. Only a draft can change (`INVOICE_NOT_DRAFT`).',
      pathParams: idParams,
      body: updateInvoiceBodySchema,
      responses: { 200: ok(invoiceSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Invoices', errors: ['INVOICE_NOT_FOUND', 'INVOICE_NOT_DRAFT', 'CURRENCY_NOT_SUPPORTED'] }),
    },
    finalize: {
      method: 'POST',
      path: '/invoices/:id/finalize',
      summary: 'Finalize a draft invoice',
      description: 'draft → open: the hosted page starts taking payments. `INVOICE_NOT_DRAFT` for any other status. Honours `Idempotency-Key`.',
      pathParams: idParams,
      body: z.strictObject({}).optional(),
      responses: { 200: ok(invoiceSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Invoices', idempotent: true, errors: ['INVOICE_NOT_FOUND', 'INVOICE_NOT_DRAFT', 'INVOICE_VOID', ...keyed] }),
    },
    void: {
      method: 'POST',
      path: '/invoices/:id/void',
      summary: 'Void an invoice',
      description:
        'The invoice can no longer be paid (its page says so) and `invoice.voided` is sent. Payments already completed stay (refund them if needed). ' +
        'Voiding a void invoice answers it again and sends nothing; a paid one is `INVOICE_ALREADY_PAID`. Honours `Idempotency-Key`.',
      pathParams: idParams,
      body: z.strictObject({}).optional(),
      responses: { 200: ok(invoiceSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Invoices', idempotent: true, errors: ['INVOICE_NOT_FOUND', 'INVOICE_ALREADY_PAID', ...keyed] }),
    },
    send: {
      method: 'POST',
      path: '/invoices/:id/send',
      summary: 'E-mail an invoice to its customer',
      description:
        "E-mails the customer the hosted page's link (through the service's SMTP settings; a test-mode invoice's e-mail says it is a test). A draft is finalized first. " +
        '`VALIDATION_ERROR` on `customer.email` when the customer has no e-mail; `INVOICE_VOID` for a void invoice; `SERVICE_UNAVAILABLE` when no SMTP server is configured or it refused. Honours `Idempotency-Key`.',
      pathParams: idParams,
      body: z
        .strictObject({
          language: z
            .enum(['en', 'bn'])
            .optional()
            .describe('The language of the e-mail and of the page its link opens (`bn`: Bangla, with Bangla digits). Default `en`; the customer can switch on the page.'),
        })
        .optional(),
      responses: { 200: ok(invoiceSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Invoices', idempotent: true, errors: ['INVOICE_NOT_FOUND', 'INVOICE_VOID', 'SERVICE_UNAVAILABLE', ...keyed] }),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
