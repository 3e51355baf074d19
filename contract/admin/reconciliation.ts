import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, dateQuery, intQuery, modeSchema, ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema } from '../common/index.ts';
import { reconciliationCategories, statementFormats } from '../vocabulary.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeFilter } from './shared.ts';

const c = initContract();

/** Statement text accepted in one upload: a busy account's day fits many times over; the API's body limit applies as well. */
export const MAX_STATEMENT_CHARS = 90_000;

const categorySchema = z
  .enum(reconciliationCategories)
  .describe(
    '`matched`: the statement row and an SMS of the account (or a completed payment) agree. `statement_only`: money arrived with no SMS: a missed payment for a person to complete through the existing review (`POST /transactions/{id}/verifications`). `sms_only`: an SMS with no statement row: a possible forgery or an SMS of another account; flag it. `amount_mismatch`: same trx id, different amounts. `fee_difference`: same amount, different fees.',
  );

export const reconciliationUploadSchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    wallet_account_id: z.number().int(),
    account_number: z.string().describe('The wallet account\'s number.'),
    gateway: z.string().describe('Code of the account\'s gateway.'),
    mode: modeSchema,
    day: z.string().describe('The day reconciled (Asia/Dhaka), `YYYY-MM-DD`.'),
    format: z.enum(statementFormats).describe('The layout the file was read as: `bkash`, `nagad` or `generic` (docs/reconciliation.md).'),
    file_name: z.string().nullable(),
    row_count: z.number().int().describe('Rows read from the file, every day and direction.'),
    uploaded_by: z.string().describe('Who uploaded it (the audit actor).'),
    created_at: timestampSchema,
    counts: z
      .object(Object.fromEntries(reconciliationCategories.map((k) => [k, z.number().int().min(0)])) as Record<(typeof reconciliationCategories)[number], z.ZodNumber>)
      .describe('Findings per category.'),
  })
  .meta({ id: 'ReconciliationUpload' });

export const reconciliationItemSchema = z
  .object({
    id: z.number().int(),
    category: categorySchema,
    trx_id: z.string().describe('The wallet\'s transaction id the finding is about.'),
    line: z.number().int().nullable().describe('Line of the statement file; null for `sms_only`.'),
    occurred_at: timestampSchema.nullable().describe('When the statement says the money moved.'),
    statement_amount: amountSchema.nullable(),
    statement_fee: amountSchema.nullable(),
    statement_balance: z.string().nullable(),
    statement_type: z.string().nullable().describe('The wallet\'s own words for the row (`Send Money`, `Cash In`).'),
    statement_status: z.string().nullable(),
    counterparty: z.string().nullable().describe('Who sent the money, as the statement gives it (personal data: stored encrypted).'),
    sms_record_id: z.number().int().nullable(),
    sms_amount: amountSchema.nullable(),
    sms_fee: amountSchema.nullable(),
    sms_time: timestampSchema.nullable(),
    sms_status: z.string().nullable().describe('The SMS record\'s match status.'),
    transaction_id: z.number().int().nullable().describe('The transaction claiming this trx id, if any: where a person verifies a `statement_only` payment.'),
    transaction_status: z.string().nullable(),
    hint_transaction_ids: z
      .array(z.number().int())
      .describe('For `statement_only`: open payments of the account with the same amount created near the time (at most 5). A hint for a person only; nothing is completed from it.'),
  })
  .meta({ id: 'ReconciliationItem' });

export const reconciliationReportSchema = z
  .object({ upload: reconciliationUploadSchema, items: z.array(reconciliationItemSchema) })
  .meta({ id: 'ReconciliationReport' });

export const uploadStatementBodySchema = z
  .strictObject({
    day: dateQuery('The day to reconcile (Asia/Dhaka), `YYYY-MM-DD`; not after today. Rows of other days in the file are kept but not reconciled.'),
    mode: modeSchema.default('live').describe('Whose SMS and payments to compare with: `live` (default) or `test`.'),
    file_name: z.string().trim().min(1).max(200).optional().describe('The uploaded file\'s name, for people.'),
    content: z
      .string()
      .min(1)
      .max(MAX_STATEMENT_CHARS, `A statement is at most ${MAX_STATEMENT_CHARS} characters: upload one day's export`)
      .describe('The statement export as text: CSV or tab-separated (a bKash statement, a Nagad statement or the generic layout; docs/reconciliation.md).'),
  })
  .meta({ id: 'AdminUploadStatementRequest' });

const TAG = 'Reconciliation';
const statementPath = z.object({ statement_id: idParam('statement upload') });

export const adminReconciliationContract = c.router(
  {
    upload: {
      method: 'POST',
      path: '/wallet-accounts/:account_id/statements',
      summary: 'Upload a wallet statement and reconcile a day',
      description: [
        "Reads the account's statement export (CSV or text), stores its rows (the counterparty encrypted) and reconciles the day's incoming rows against the account's SMS records and the payments claiming the same trx id, by trx id only (docs/reconciliation.md).",
        'Reconciliation never completes, fails or changes a payment: a `statement_only` finding is completed by a person through the existing verification.',
        'A file that is not text is `STATEMENT_UNREADABLE`, one with no known layout `STATEMENT_UNKNOWN_COLUMNS`, one with bad rows `STATEMENT_ROWS_INVALID` (one item per row, nothing stored); a day after today in Asia/Dhaka `STATEMENT_DAY_IN_FUTURE`; an account of a brand outside the operator\'s scope `WALLET_ACCOUNT_NOT_FOUND`. Recorded in the audit log.',
      ].join(' '),
      pathParams: z.object({ account_id: idParam('wallet account') }),
      body: uploadStatementBodySchema,
      responses: { 201: ok(reconciliationReportSchema) },
      metadata: adminMeta(TAG, ['WALLET_ACCOUNT_NOT_FOUND', 'STATEMENT_UNREADABLE', 'STATEMENT_UNKNOWN_COLUMNS', 'STATEMENT_ROWS_INVALID', 'STATEMENT_DAY_IN_FUTURE']),
    },
    list: {
      method: 'GET',
      path: '/statements',
      summary: 'List reconciliation reports',
      description: 'Statement uploads, newest first, with their findings per category.',
      query: pageQuerySchema.extend({
        brand_id: brandFilter,
        account_id: intQuery({ min: 1, description: 'Only uploads for this wallet account.' }).optional(),
        day: dateQuery('Only uploads reconciling this day.').optional(),
        mode: modeFilter,
      }),
      responses: { 200: okList(reconciliationUploadSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta(TAG),
    },
    get: {
      method: 'GET',
      path: '/statements/:statement_id',
      summary: 'One reconciliation report',
      description: 'The upload and its findings: `statement_only`, `sms_only`, `amount_mismatch` and `fee_difference` first, then `matched`, each by time.',
      pathParams: statementPath,
      responses: { 200: ok(reconciliationReportSchema) },
      metadata: adminMeta(TAG, ['RECONCILIATION_NOT_FOUND']),
    },
    downloadCsv: {
      method: 'GET',
      path: '/statements/:statement_id/report.csv',
      summary: 'Download a reconciliation report as CSV',
      description:
        "The report's findings as CSV (RFC 4180, a heading row, `Content-Disposition: attachment`). A cell that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or carriage return) is prefixed with `'`.",
      pathParams: statementPath,
      responses: {
        200: c.otherResponse({ contentType: 'text/csv', body: z.string().describe('category,trx_id,line,occurred_at,statement_amount,... one row per finding.') }),
      },
      metadata: adminMeta(TAG, ['RECONCILIATION_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
