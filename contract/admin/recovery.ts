import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { intQuery, nameText, ok, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam } from './shared.ts';
import { adminSmsRecordSchema } from './sms-records.ts';
import { backfillReasons, backfillStatuses } from '../vocabulary.ts';

const c = initContract();

/** Longest window one backfill may ask for: a phone re-sending weeks of SMS is a different job (an export). */
export const MAX_BACKFILL_WINDOW_DAYS = 7;

export const backfillReasonSchema = z
  .enum(backfillReasons)
  .describe('Why it was asked: `manual` by an operator; else by the service on a gap (the phone was offline, its heartbeats stopped, or its balance chain broke), or `payment_submitted` when a customer submitted a trx id no stored SMS proves.');
export const backfillStatusSchema = z
  .enum(backfillStatuses)
  .describe('`pending` not yet polled by the phone; `delivered` the phone has fetched it; `answered` the phone re-sent the window; `failed` unanswered after every retry (reported to operators).');

export const backfillRequestSchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    device_id: z.number().int(),
    from: timestampSchema.describe('Start of the inbox window to re-send.'),
    to: timestampSchema.describe('End of the inbox window to re-send.'),
    reason: backfillReasonSchema,
    status: backfillStatusSchema,
    attempts: z.number().int().describe('Push notifications sent to nudge the phone so far.'),
    next_attempt_at: timestampSchema.describe('When the next nudge (or, after the last, the failure) is due.'),
    requested_by: z.string().nullable().describe('The admin actor for `manual`; null when the service asked by itself.'),
    senders: z.array(z.string()).nullable().describe("Only these senders' SMS are asked for (`payment_submitted`: the gateway's official senders); null: every allowed sender."),
    resent_count: z.number().int().nullable().describe('How many SMS the phone re-sent, once answered.'),
    delivered_at: timestampSchema.nullable(),
    answered_at: timestampSchema.nullable(),
    failed_at: timestampSchema.nullable(),
    created_at: timestampSchema,
    sequences: z
      .object({ sim_slot: z.number().int().nullable(), sequence_epoch: z.string(), numbers: z.array(z.number().int()) })
      .optional()
      .describe('For `sequence_gap`: the counter (SIM slot, epoch) and the sequence numbers asked (docs/recovery.md).'),
  })
  .meta({ id: 'AdminBackfillRequest' });

export const pastedSmsRequestSchema = z
  .strictObject({
    device_id: z.number().int().min(1).describe('The phone (and so the wallet and brand) the SMS belongs to.'),
    // Not trimmed: compared and stored exactly as given, like a forwarded SMS's sender.
    sender: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[^\p{Cc}]*$/u, 'sender must not contain control characters')
      .refine((s) => s.trim() !== '', 'sender must not be blank')
      .describe('Sender exactly as the phone shows it, e.g. `bKash`; not trimmed (a sender with characters outside printable ASCII is not an official sender).'),
    body: z.string().trim().min(1).max(2000).describe('The SMS text, as received.'),
    received_at: z.iso.datetime({ offset: true }).describe('When the phone received it (as shown on the phone).'),
    operator_name: nameText(100).optional().describe('Name of the person entering it, recorded with the record and in the audit log.'),
  })
  .meta({ id: 'PastedSmsRequest' });

export const pastedSmsRecordSchema = adminSmsRecordSchema
  .extend({
    entry: z.enum(['forwarded', 'pasted']).describe('`pasted`: entered by hand by an operator.'),
    entered_by: z.string().nullable().describe('The admin actor who pasted it.'),
    operator_name: z.string().nullable(),
  })
  .meta({ id: 'AdminPastedSmsRecord' });

export const backfillWindowRequestSchema = z
  .strictObject({
    from: z.iso.datetime({ offset: true }).describe('Start of the window (not in the future).'),
    to: z.iso.datetime({ offset: true }).describe(`End of the window: after \`from\`, not in the future, at most ${MAX_BACKFILL_WINDOW_DAYS} days after \`from\`.`),
  })
  .meta({ id: 'BackfillWindowRequest' });

export const adminRecoveryContract = c.router(
  {
    pasteSms: {
      method: 'POST',
      path: '/sms-records',
      summary: 'Paste a missed SMS',
      description:
        'Stores an SMS the phone never forwarded, entered by hand. It goes through exactly the parsing, duplicate and matching rules of a forwarded SMS: it can complete the payment it proves; the same message forwarded later by the phone is a `duplicate`, never a second match. A text with no readable amount or id is stored as `no_match` with the reason. Marked `pasted` with the actor and recorded in the audit log (`sms_record.paste`).',
      body: pastedSmsRequestSchema,
      responses: { 201: ok(pastedSmsRecordSchema) },
      metadata: adminMeta('SMS records', ['DEVICE_NOT_FOUND', 'DEVICE_REVOKED']),
    },
    requestBackfill: {
      method: 'POST',
      path: '/devices/:device_id/backfill-requests',
      summary: 'Ask a phone to re-send a window of its SMS',
      description:
        'The phone fetches the request as a command (`GET /api/mobile/v1/commands`), re-forwards the official-sender SMS it received in the window and answers with how many. Unanswered, it is nudged by push notification with backoff and ends `failed` (listed here, reported to operators). A revoked device is refused (409 `DEVICE_REVOKED` naming `device_id`): it no longer polls.',
      pathParams: z.object({ device_id: idParam('device') }),
      body: backfillWindowRequestSchema,
      responses: { 201: ok(backfillRequestSchema) },
      metadata: adminMeta('Devices', ['DEVICE_NOT_FOUND', 'DEVICE_REVOKED']),
    },
    listBackfillRequests: {
      method: 'GET',
      path: '/backfill-requests',
      summary: 'List backfill requests',
      description: 'Newest first, at most 100; `status=failed` lists the ones no phone answered.',
      query: z.strictObject({
        brand_id: brandFilter,
        device_id: intQuery({ min: 1, description: 'Only requests to this device.' }).optional(),
        status: backfillStatusSchema.optional(),
      }),
      responses: { 200: ok(z.array(backfillRequestSchema)) },
      metadata: adminMeta('Devices'),
    },
  },
  adminRouterOptions,
);
