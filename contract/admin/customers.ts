import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema, uuidSchema } from '../common/index.ts';
import { createCustomerBodySchema, updateCustomerBodySchema } from '../merchant/customers.ts';
import { adminMeta, adminRouterOptions, idParam, modeField } from './shared.ts';

const c = initContract();

export const adminCustomerSchema = z
  .object({
    id: z.number().int(),
    uuid: uuidSchema,
    brand_id: z.number().int(),
    mode: modeField,
    name: z.string().nullable(),
    email_masked: z.string().nullable().describe('Masked email, e.g. `j***@example.com`.'),
    phone_masked: z.string().nullable().describe('Masked phone, e.g. `+88017*****678`.'),
    created_at: timestampSchema,
  })
  .meta({ id: 'AdminCustomer' });

export const importReportSchema = z
  .object({
    dry_run: z.boolean().describe('True: nothing was written, `accepted` is what an import would take.'),
    total_rows: z.number().int().describe('Data rows in the file (the header and blank lines not counted).'),
    accepted: z.number().int().describe('Rows imported (a dry run: rows that would be).'),
    refused: z
      .array(
        z.object({
          line: z.number().int().describe('Line of the file (the header is line 1).'),
          reason: z
            .enum(['invalid_email', 'invalid_phone', 'missing_contact', 'duplicate_in_file', 'duplicate_existing'])
            .describe('`invalid_email` / `invalid_phone`: not a valid address or number; `missing_contact`: neither given; `duplicate_in_file`: an earlier row has the same email or phone; `duplicate_existing`: the brand already has a customer with it (also every row of a file imported before).'),
          field: z.enum(['email', 'phone']).nullable(),
          message: z.string(),
        }),
      )
      .describe('Every refused row with its line and reason, in file order; none of them was written.'),
  })
  .meta({ id: 'AdminCustomerImportReport' });

const brandPath = z.object({ brand_id: idParam('brand') });
const customerPath = z.object({ customer_id: idParam('customer') });
const modeBody = z.enum(['live', 'test']).describe('The mode the customers belong to (`live` or `test`): test and live customers never mix.');

const TAG = 'Customers';

export const adminCustomersContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/brands/:brand_id/customers',
      summary: "A brand's customers",
      description: "The brand's customers of one mode, newest first, contact details masked. Deleted (erased) customers are not listed.",
      pathParams: brandPath,
      query: z.strictObject({ ...pageQuerySchema.shape, mode: modeBody.default('live') }),
      responses: { 200: okList(adminCustomerSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta(TAG, ['BRAND_NOT_FOUND']),
    },
    create: {
      method: 'POST',
      path: '/brands/:brand_id/customers',
      summary: 'Add a customer',
      description:
        'As the merchant API\'s create: an email or phone the brand already has in the mode is `CUSTOMER_EMAIL_TAKEN` / `CUSTOMER_PHONE_TAKEN`. Recorded in the audit log (which details it has, never the details).',
      pathParams: brandPath,
      body: createCustomerBodySchema.extend({ mode: modeBody }).meta({ id: 'AdminCreateCustomerRequest' }),
      responses: { 201: ok(adminCustomerSchema) },
      metadata: adminMeta(TAG, ['BRAND_NOT_FOUND', 'CUSTOMER_EMAIL_TAKEN', 'CUSTOMER_PHONE_TAKEN']),
    },
    update: {
      method: 'PATCH',
      path: '/customers/:customer_id',
      summary: 'Change a customer',
      description: 'As the merchant API\'s change (`null` removes a field; one of email and phone stays). Recorded in the audit log (which fields changed).',
      pathParams: customerPath,
      body: updateCustomerBodySchema,
      responses: { 200: ok(adminCustomerSchema) },
      metadata: adminMeta(TAG, ['CUSTOMER_NOT_FOUND', 'CUSTOMER_EMAIL_TAKEN', 'CUSTOMER_PHONE_TAKEN']),
    },
    delete: {
      method: 'DELETE',
      path: '/customers/:customer_id',
      summary: 'Delete (erase) a customer',
      description: "As the merchant API's delete: the personal data is erased for good, the customer's payments stay. Recorded in the audit log.",
      pathParams: customerPath,
      body: z.strictObject({}).optional().describe('No body.'),
      responses: { 204: c.noBody() },
      metadata: adminMeta(TAG, ['CUSTOMER_NOT_FOUND']),
    },
    import: {
      method: 'POST',
      path: '/brands/:brand_id/customers/imports',
      summary: 'Import customers from CSV',
      description: [
        'A CSV file (RFC 4180, UTF-8) with a header naming some of `name`, `email`, `phone` (an export\'s `id`, `uuid`, `created_at` are passed over), one customer per row; at most 1000 rows and 90 KiB (`CUSTOMER_IMPORT_TOO_LARGE`).',
        'Every row is checked as a create checks it; the valid rows are imported and each refused row reported with its line and reason, in one transaction (a failure imports nothing, never part of a row).',
        'A row whose email or phone the brand has already is refused, so importing the same file again adds nothing. `dry_run: true` reports without writing.',
        'A file that is not readable CSV, or whose header names an unknown column or neither email nor phone, is `VALIDATION_ERROR` (field `csv`) and nothing is read. Recorded in the audit log (counts only).',
      ].join(' '),
      pathParams: brandPath,
      body: z
        .strictObject({
          mode: modeBody,
          csv: z.string().min(1).describe('The file\'s text.'),
          dry_run: z.boolean().default(false).describe('Check and report only.'),
        })
        .meta({ id: 'AdminCustomerImportRequest' }),
      responses: { 200: ok(importReportSchema) },
      metadata: adminMeta(TAG, ['BRAND_NOT_FOUND', 'CUSTOMER_IMPORT_TOO_LARGE']),
    },
    export: {
      method: 'POST',
      path: '/brands/:brand_id/customers/exports',
      summary: 'Export customers as CSV',
      description:
        "The brand's customers of the mode as CSV (`id,uuid,name,email,phone,created_at`), personal data in clear: owners only, and recorded in the audit log. A cell starting with `=`, `+`, `-`, `@`, tab or carriage return is written with a leading `'` so no spreadsheet runs it as a formula (an import strips it again).",
      pathParams: brandPath,
      body: z.strictObject({ mode: modeBody }).meta({ id: 'AdminCustomerExportRequest' }),
      responses: {
        200: ok(
          z
            .object({ filename: z.string().describe('A suggested file name.'), count: z.number().int(), csv: z.string().describe('The CSV text (UTF-8).') })
            .meta({ id: 'AdminCustomerExport' }),
        ),
      },
      metadata: adminMeta(TAG, ['BRAND_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
