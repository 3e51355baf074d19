import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, dateQuery, errorEnvelopeSchema, intQuery, ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema } from '../common/index.ts';
import { smsMatchStatusSchema } from '../device/sms-messages.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeField, modeFilter } from './shared.ts';

const c = initContract();

const includeBody = z
  .enum(['body'])
  .optional()
  .describe(
    '`body` adds the decrypted SMS text. Off by default: SMS text is personal data (names, phone numbers, balances), so lists never carry it; an admin resolving a `low_confidence` or `no_match` record asks for it explicitly, and every such read is recorded in the audit log (`sms_record.read_body`, record ids only).',
  );

export const adminSmsRecordSchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    mode: modeField.describe("The forwarding device's mode: a test device's SMS is evidence only for test payments."),
    device_id: z.number().int(),
    device_message_id: z.string(),
    sender: z.string().describe('Sender as the phone showed it.'),
    received_at: timestampSchema.describe('Device clock.'),
    server_received_at: timestampSchema,
    sim_slot: z.number().int().nullable(),
    match_status: smsMatchStatusSchema,
    duplicate_of: z.number().int().nullable().describe('For `duplicate`: the record first stored with this content.'),
    gateway: z.string().nullable().describe('Code of the gateway whose template parsed it.'),
    parsed_amount: amountSchema.nullable(),
    parsed_trx_id: z.string().nullable(),
    transaction_id: z.number().int().nullable().describe('The transaction it completed (or was resolved against).'),
    trx_id: z.string().nullable(),
    confidence: z.string().nullable().describe('Match confidence, 0 to 1, as a decimal string.'),
    candidate_ids: z.array(z.number().int()).describe('Transactions it could belong to (for `low_confidence`).'),
    reason: z.string().nullable().describe('Why it got its match status.'),
    matched_at: timestampSchema.nullable(),
    resolution: z.enum(['verified', 'rejected']).nullable().describe('How an admin resolved a record left for review, or null.'),
    resolved_by: z.string().nullable().describe('The admin actor who resolved it.'),
    resolved_at: timestampSchema.nullable(),
    resolution_note: z.string().nullable(),
    created_at: timestampSchema,
    body: z.string().optional().describe('Decrypted SMS text; only with `include=body`.'),
  })
  .meta({ id: 'AdminSmsRecord' });

export const smsRecordListQuerySchema = z
  .strictObject({
    ...pageQuerySchema.shape,
    brand_id: brandFilter,
    mode: modeFilter,
    match_status: smsMatchStatusSchema.optional().describe('Only records with this match status.'),
    device_id: intQuery({ min: 1, description: 'Only records forwarded by this device.' }).optional(),
    from: dateQuery('Received by the server on or after this UTC date (YYYY-MM-DD, inclusive).').optional(),
    to: dateQuery('Received by the server on or before this UTC date (YYYY-MM-DD, inclusive).').optional(),
    include: includeBody,
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'Must not be before `from`', path: ['to'] });

export const adminSmsRecordsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/sms-records',
      summary: 'List forwarded SMS data records',
      description: 'Newest first, with parsed fields, confidence and candidate transactions; the SMS text only with `include=body`.',
      query: smsRecordListQuerySchema,
      responses: { 200: okList(adminSmsRecordSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('SMS records'),
    },
    get: {
      method: 'GET',
      path: '/sms-records/:sms_record_id',
      summary: 'Get a forwarded SMS data record',
      pathParams: z.object({ sms_record_id: idParam('SMS record') }),
      query: z.strictObject({ include: includeBody }),
      responses: { 200: ok(adminSmsRecordSchema), 404: errorEnvelopeSchema },
      metadata: adminMeta('SMS records', ['SMS_RECORD_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
