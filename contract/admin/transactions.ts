import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, currencySchema, dateQuery, ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema, uuidSchema } from '../common/index.ts';
import { gatewayTypes, timelineKinds, transactionStatuses } from '../vocabulary.ts';
import { smsMatchStatusSchema } from '../device/sms-messages.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeField, modeFilter } from './shared.ts';

const c = initContract();

export const adminTransactionSchema = z
  .object({
    id: z.number().int(),
    trx_id: z.string().describe('Service transaction reference.'),
    payment_id: uuidSchema,
    brand_id: z.number().int(),
    mode: modeField,
    gateway: z.string().describe('Gateway code.'),
    gateway_type: z.enum(gatewayTypes),
    method: z.string(),
    gateway_trx_id: z.string().nullable(),
    amount: amountSchema.describe('Charged on the gateway (after conversion).'),
    currency: currencySchema,
    fee: amountSchema,
    exchange_rate: z.string().nullable(),
    requested_amount: amountSchema.describe('The intent amount, in the intent currency.'),
    requested_currency: currencySchema,
    reference: z.string().nullable().describe("The merchant's own reference."),
    sender_number: z
      .string()
      .nullable()
      .describe('The payer number the customer declared at checkout, all but its last three digits masked (as an SMS record’s `parsed_sender_number`); null when none was declared.'),
    status: z.enum(transactionStatuses),
    failure_reason: z.string().nullable(),
    completion_source: z.string().nullable().describe('What completed it: `sms`, `admin`, `gateway_callback`, `sandbox`.'),
    created_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
    wallet_account: z
      .object({ id: z.number().int(), number: z.string(), label: z.string().nullable() })
      .nullable()
      .describe("The brand's wallet account the customer was told to pay into (manual gateways); null: the gateway's own number."),
  })
  .meta({ id: 'AdminTransaction' });

export const transactionSmsSchema = z
  .object({
    id: z.number().int().describe('SMS data record id.'),
    match_status: smsMatchStatusSchema,
    role: z.enum(['matched', 'candidate']).describe('`matched`: this SMS completed (or was resolved against) the transaction; `candidate`: it could belong to it (low confidence).'),
    parsed_amount: amountSchema.nullable(),
    parsed_trx_id: z.string().nullable(),
    confidence: z.string().nullable(),
    received_at: timestampSchema,
  })
  .meta({ id: 'AdminTransactionSms' });

export const adminTransactionDetailSchema = adminTransactionSchema
  .extend({ sms_records: z.array(transactionSmsSchema).describe('Forwarded SMS that matched it or list it as a candidate, newest first (no SMS text).') })
  .meta({ id: 'AdminTransactionDetail' });

export const transactionListQuerySchema = z
  .strictObject({
    ...pageQuerySchema.shape,
    brand_id: brandFilter,
    mode: modeFilter,
    status: z.enum(transactionStatuses).optional().describe('Only transactions in this status.'),
    gateway: z.string().min(1).max(50).optional().describe('Only transactions on this gateway (code).'),
    trx_id: z.string().min(1).max(100).optional().describe('Only the transaction with this service reference, or those with this gateway reference.'),
    reference: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .describe(
        "Any reference: the transaction's service trx id, its gateway trx id (case-insensitive), the payment id (the intent's UUID) or the merchant's own reference (exact).",
      ),
    customer_email: z
      .string()
      .min(3)
      .max(254)
      .optional()
      .describe(
        "Only payments of the customer with this e-mail (trimmed and lower-cased, then matched on each visible brand's keyed hash of it; nothing is decrypted to search). An address that cannot be valid is a 400 naming `customer_email`.",
      ),
    customer_phone: z
      .string()
      .min(3)
      .max(32)
      .optional()
      .describe('Only payments of the customer with this phone number (E.164 or national, read as Bangladeshi; matched on the keyed hash of its E.164 form). A number that cannot be valid is a 400 naming `customer_phone`.'),
    from: dateQuery('Created on or after this UTC date (YYYY-MM-DD, inclusive).').optional(),
    to: dateQuery('Created on or before this UTC date (YYYY-MM-DD, inclusive).').optional(),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'Must not be before `from`', path: ['to'] });

const txPath = z.object({ transaction_id: idParam('transaction') });

export const verifyTransactionBodySchema = z
  .strictObject({
    sms_record_id: z.number().int().min(1).optional().describe('The forwarded SMS that proves the payment (recorded as resolved by this verification).'),
    note: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .optional()
      .describe('Why it was verified by hand; kept with the SMS record and in the audit log, and shown in the transaction’s timeline. Write no customer data in it.'),
    accept_amount_difference: z
      .boolean()
      .optional()
      .describe(
        "`true`: the named SMS proves the payment although its amount differs from the transaction's (the customer sent a little more or less and the merchant accepts it). Needs `sms_record_id` and a `note`; the gateway and mode must still agree, and the trx id unless `correct_trx_id`. Both amounts are kept in the audit log; the transaction keeps its own amount.",
      ),
    correct_trx_id: z
      .boolean()
      .optional()
      .describe(
        "`true`: the customer mistyped the gateway trx id; the transaction's claimed id is corrected to the named SMS's, which must be within the typo distance the review suggestions use (at most 2 edits, `O`/`0`, `I`/`1`, `S`/`5`, `B`/`8` counting half) of the claimed id (`SMS_EVIDENCE_MISMATCH` otherwise). Needs `sms_record_id` and a `note`; amount (unless `accept_amount_difference`), gateway and mode must still agree. A transaction that claims no id, or the SMS's id already, has nothing to correct (`VALIDATION_ERROR` on `correct_trx_id`). The audit log keeps both ids (`before.gateway_trx_id` the claimed one, `after.gateway_trx_id` the SMS's, `after.claimed_gateway_trx_id`), and so does the timeline.",
      ),
  })
  .refine((b) => !b.accept_amount_difference || b.sms_record_id !== undefined, { message: 'accept_amount_difference needs sms_record_id', path: ['sms_record_id'] })
  .refine((b) => !b.accept_amount_difference || b.note !== undefined, { message: 'accept_amount_difference needs a note saying why', path: ['note'] })
  .refine((b) => !b.correct_trx_id || b.sms_record_id !== undefined, { message: 'correct_trx_id needs sms_record_id', path: ['sms_record_id'] })
  .refine((b) => !b.correct_trx_id || b.note !== undefined, { message: 'correct_trx_id needs a note saying why', path: ['note'] })
  .meta({ id: 'AdminVerifyTransactionRequest' });

export const rejectTransactionBodySchema = z
  .strictObject({
    reason: z.string().trim().min(1, 'reason is required').max(500).describe('Shown as `failure_reason` to the merchant (no customer data).'),
  })
  .meta({ id: 'AdminRejectTransactionRequest' });

export const timelineEntrySchema = z
  .object({
    at: timestampSchema,
    kind: z
      .enum(timelineKinds)
      .describe(
        '`created` the transaction started; `sms` a forwarded SMS matched it or named it as a candidate; `completed`, `failed`, `expired` its outcome; `webhook` a delivery of one of its events; `refund` a refund of it; `action` a recorded change to it (a person verifying or rejecting, a customer replacing the trx id).',
      ),
    title: z.string().describe('One line for people, without personal data.'),
    status: z.string().nullable().describe('The status of the thing named (the SMS match status, delivery status, refund status), when it has one.'),
    actor: z.string().nullable().describe('Who acted, for `action` entries.'),
    note: z
      .string()
      .nullable()
      .describe('What the person who decided wrote: the note of a verification, the reason of a rejection (`action` entries), the note or reason kept with an SMS record they resolved (`sms` entries).'),
    ref: z
      .object({ type: z.enum(['sms_record', 'webhook_delivery', 'refund', 'audit_entry']), id: z.number().int() })
      .nullable()
      .describe('The object behind the entry, to open it.'),
  })
  .meta({ id: 'AdminTimelineEntry' });

export const adminTransactionsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/transactions',
      summary: 'List transactions',
      description: 'Every brand’s, newest first, with filters. Out-of-range or malformed filters are a 400 naming the parameter.',
      query: transactionListQuerySchema,
      responses: { 200: okList(adminTransactionSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Transactions'),
    },
    get: {
      method: 'GET',
      path: '/transactions/:transaction_id',
      summary: 'Get a transaction with its SMS evidence',
      description: 'One transaction of any brand by its numeric id (`transaction_id`), with the forwarded SMS that matched it or list it as a candidate (no SMS text), for manual verification.',
      pathParams: txPath,
      responses: { 200: ok(adminTransactionDetailSchema) },
      metadata: adminMeta('Transactions', ['TRANSACTION_NOT_FOUND']),
    },
    timeline: {
      method: 'GET',
      path: '/transactions/:transaction_id/timeline',
      summary: 'The story of a transaction',
      description:
        'Everything that happened to it, oldest first: started, each SMS that matched it or named it as a candidate (with how a person resolved it, and their note), the outcome, each webhook delivery of its events with its status, its refunds, and every recorded change (who verified or rejected it with their note or reason, a claimed trx id corrected to the SMS’s with both ids, trx id replacements). No SMS text and no personal data beyond what operators wrote in their notes.',
      pathParams: txPath,
      responses: { 200: ok(z.array(timelineEntrySchema)) },
      metadata: adminMeta('Transactions', ['TRANSACTION_NOT_FOUND']),
    },
    verify: {
      method: 'POST',
      path: '/transactions/:transaction_id/verifications',
      summary: 'Verify a transaction manually',
      description:
        'Completes a `pending`, `processing` or `awaiting_verification` transaction on the admin’s word (the merchant gets `payment.completed`): for payments the matcher left to review (`low_confidence`, `no_candidate`, `balance_mismatch`). Naming the SMS record that proves it marks that record `matched` and gives the transaction its gateway trx id; the SMS must be unmatched, forwarded by a device of the transaction’s mode, and say the same amount, gateway and trx id (`SMS_EVIDENCE_MISMATCH` otherwise), unless the admin accepts another amount (`accept_amount_difference`) or corrects a mistyped claimed id to the SMS’s (`correct_trx_id`), each with a note. A transaction that is no longer open is `INVALID_STATE`. Recorded in the audit log with the change, in one database transaction.',
      pathParams: txPath,
      body: verifyTransactionBodySchema,
      responses: { 200: ok(adminTransactionSchema) },
      metadata: adminMeta('Transactions', ['TRANSACTION_NOT_FOUND', 'SMS_RECORD_NOT_FOUND', 'INVALID_STATE', 'SMS_EVIDENCE_MISMATCH', 'GATEWAY_TRX_ID_TAKEN']),
    },
    reject: {
      method: 'POST',
      path: '/transactions/:transaction_id/rejections',
      summary: 'Reject a transaction',
      description:
        'Fails an open transaction (the merchant gets `payment.failed`); the customer may pay the intent again until it expires. The gateway trx id it claimed is released, so the genuine payment can still be matched; SMS records whose only candidate it was are marked resolved. A transaction that is no longer open is `INVALID_STATE`. Recorded in the audit log with the change, in one database transaction.',
      pathParams: txPath,
      body: rejectTransactionBodySchema,
      responses: { 200: ok(adminTransactionSchema) },
      metadata: adminMeta('Transactions', ['TRANSACTION_NOT_FOUND', 'INVALID_STATE']),
    },
  },
  adminRouterOptions,
);
