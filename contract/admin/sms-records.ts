import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, dateQuery, intQuery, ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema } from '../common/index.ts';
import { smsMatchStatusSchema } from '../device/sms-messages.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeField, modeFilter } from './shared.ts';
import { balanceChainStates, smsDirections, smsResolutions } from '../vocabulary.ts';

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
    sender: z.string().nullable().describe('Sender as the phone showed it; null once the text expired (`text_expired_at`).'),
    received_at: timestampSchema.describe('Device clock.'),
    server_received_at: timestampSchema,
    sim_slot: z.number().int().nullable().describe('The SIM slot it arrived on, when the phone said.'),
    receiving_number: z.string().nullable().describe("The receiving SIM's number, when the phone knew it."),
    match_status: smsMatchStatusSchema,
    duplicate_of: z.number().int().nullable().describe('For `duplicate`: the record first stored with this content.'),
    gateway: z.string().nullable().describe('Code of the gateway whose template parsed it.'),
    parsed_amount: amountSchema.nullable(),
    parsed_trx_id: z.string().nullable(),
    transaction_id: z.number().int().nullable().describe('The transaction it completed (or was resolved against).'),
    trx_id: z.string().nullable(),
    confidence: z.string().nullable().describe('Match confidence, 0 to 1, as a decimal string.'),
    candidate_ids: z.array(z.number().int()).describe('Transactions it could belong to (for `low_confidence`).'),
    reason: z.string().nullable().describe('Why it got its match status, in words.'),
    reason_code: z
      .string()
      .nullable()
      .describe('Why it got its match status, as a code (`certain_match`, `trx_id_unclaimed`, `amount_mismatch`, `sender_number_mismatch`, `balance_mismatch`, `above_review_threshold`...); every code is listed in docs/matching.md.'),
    suggestions: z
      .array(
        z.object({
          transaction_id: z.number().int(),
          why: z.string().describe('Why a person should look at it.'),
          distance: z.number().nullable().describe('Edit distance of its claimed id to the SMS\'s (O/0, I/1, S/5, B/8 count half); null when it claims none.'),
        }),
      )
      .describe('For records left for review: the transactions it may belong to, best first.'),
    direction: z.enum(smsDirections).nullable().describe('`in` money received (may pay a payment), `out` money sent from the wallet (balance chain evidence only).'),
    kind: z.string().nullable().describe('The movement the template reads (`received`, `send_money`, `cash_out`...), when it names one.'),
    parsed_balance: amountSchema.nullable().describe('Balance after the movement, as the SMS reports it.'),
    parsed_fee: amountSchema.nullable(),
    parsed_sender_number: z.string().nullable().describe('The payer number the SMS names, all but its last three digits masked.'),
    sms_time: timestampSchema.nullable().describe("The SMS time matching used: `received_at` corrected by the phone's clock offset, never after `server_received_at`."),
    balance_chain: z
      .object({
        state: z
          .enum(balanceChainStates)
          .nullable()
          .describe('`first` no earlier balance of this phone and wallet; `follows` agrees with the previous one, which is trusted; `mismatch` does not (a forged or missed SMS); `after_break` agrees with the previous one, but the chain broke before it and was not repaired since (untrusted: never completes a payment by itself); `impossible` lower than the credit itself; `unreadable` not a number; `missing` a credit without a readable balance on a chain whose messages carry balances; `repaired` was `mismatch` or `after_break`, and an SMS that arrived later (a backfilled one) filled the gap so that it follows; `new_sim` the first balance of this wallet on a SIM slot of a phone that already has the wallet’s chain on another slot, where no wallet account names this slot (untrusted until a person verifies one of its SMS); null: the SMS reports no balance and the chain has none to expect. Only `first`, `follows` and `repaired` (and a record an operator verified) are trusted links. docs/matching.md, "Balance chain".'),
        previous_id: z.number().int().nullable().describe('The record whose balance it was checked against.'),
        expected_balance: z.string().nullable().describe('The balance the previous message implies (a decimal string; negative when the chain cannot be right).'),
      })
      .describe("Its place in the phone's balance chain for this wallet (one chain per phone, SIM slot and wallet; an SMS of unknown slot is on the phone's chain for the wallet)."),
    matched_at: timestampSchema.nullable(),
    resolution: z
      .enum(smsResolutions)
      .nullable()
      .describe('How a person resolved a record left for review, or null: `verified` (it proved a transaction), `rejected` (its only candidate was rejected), `dismissed` (looked at and set aside, e.g. a personal transfer or a test).'),
    resolved_by: z.string().nullable().describe('The admin actor who resolved it.'),
    resolved_at: timestampSchema.nullable(),
    resolution_note: z.string().nullable(),
    created_at: timestampSchema,
    text_expired_at: timestampSchema
      .nullable()
      .describe('When the retention job dropped the sender and the text (`RETENTION_SMS_TEXT_DAYS`, README "Retention"); the parsed evidence, the content hash and the match stay. Null: the text is kept.'),
    body: z.string().optional().describe('Decrypted SMS text; only with `include=body`, and never once the text expired.'),
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
    needs_review: z
      .enum(['true', 'false'])
      .optional()
      .describe(
        '`true`: only records waiting for a person (match status `no_candidate`, `low_confidence` or `balance_mismatch`, not yet resolved): the SMS half of the review queue. `false`: only the others.',
      ),
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
      description: 'One forwarded SMS with its parse, confidence, candidate transactions and match status; the SMS text only with `include=body`.',
      pathParams: z.object({ sms_record_id: idParam('SMS record') }),
      query: z.strictObject({ include: includeBody }),
      responses: { 200: ok(adminSmsRecordSchema) },
      metadata: adminMeta('SMS records', ['SMS_RECORD_NOT_FOUND']),
    },
    dismiss: {
      method: 'POST',
      path: '/sms-records/:sms_record_id/dismissals',
      summary: 'Dismiss an SMS record left for review',
      description:
        'Takes a record waiting for a person (`no_candidate`, `low_confidence`, `balance_mismatch`, unresolved) out of the review queue without completing anything: the person looked at it and it proves no payment (a personal transfer, a test, a payment settled another way). Its match status stays as it was; `resolution` becomes `dismissed` with the reason, who and when. A record that is not waiting for review (already resolved, matched, a duplicate, money out) is `INVALID_STATE`. Recorded in the audit log.',
      pathParams: z.object({ sms_record_id: idParam('SMS record') }),
      body: z.strictObject({
        reason: z.string().trim().min(1, 'reason is required').max(500).describe('Why it proves no payment; kept with the record and in the audit log.'),
      }),
      responses: { 200: ok(adminSmsRecordSchema) },
      metadata: adminMeta('SMS records', ['SMS_RECORD_NOT_FOUND', 'INVALID_STATE']),
    },
  },
  adminRouterOptions,
);
