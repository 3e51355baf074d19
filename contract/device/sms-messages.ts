import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta, ok } from '../common/index.ts';
import { DEVICE_PATH_PREFIX } from './shared.ts';
import { smsRecordStatuses } from '../vocabulary.ts';

const c = initContract();

/** Most SMS one call forwards. */
export const MAX_SMS_BATCH = 50;
/** Longest SMS text accepted (matches the parser's bound; real SMS, even concatenated, are far shorter). */
export const MAX_FORWARDED_SMS_LENGTH = 2000;

/** A per-SIM sequence number: positive, within a PostgreSQL integer. */
export const smsSequenceSchema = z.number().int().min(1).max(2_147_483_646);

const noControlChars = (what: string) => z.string().regex(/^[^\p{Cc}]*$/u, `${what} must not contain control characters`);

/** Most parts of one concatenated SMS the service joins (a wallet SMS is 2 or 3). */
export const MAX_SMS_PARTS = 16;

export const smsPartSchema = z
  .strictObject({
    reference: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .describe("The concatenation reference of the SMS's User Data Header (3GPP TS 23.040: IEI 0x00, 8-bit, or IEI 0x08, 16-bit): the same for every part of one long SMS."),
    index: z.number().int().min(1).describe('Which part this is, from 1 (the header\'s sequence number).'),
    count: z.number().int().min(2).max(MAX_SMS_PARTS).describe(`How many parts the long SMS has (the header's total), 2 to ${MAX_SMS_PARTS}.`),
  })
  .refine((p) => p.index <= p.count, { message: 'index must not exceed count', path: ['index'] })
  .meta({ id: 'SmsPart' })
  .describe(
    "Only for one part of a long (concatenated) SMS that the app could not join itself (the other parts arrived in another delivery, or the app was restarted between them): its User Data Header's concatenation fields. `body` is then this part's text only. The service keeps the part (encrypted) until every part from the same sender, SIM slot, reference and count has arrived, joins their texts in index order and handles the whole as one SMS; a half is never parsed. Parts that never complete are stored after 24 hours as one `no_match` record (`reason_code` `incomplete_parts`). Leave it out for a whole SMS, including one the app joined (the device SDK's `joinSmsParts`).",
  );

export const forwardedSmsSchema = z
  .strictObject({
    device_message_id: noControlChars('device_message_id')
      .min(1)
      .max(128)
      .describe("The phone's own id for the message (e.g. its SMS provider row id). Sending the same id again stores nothing new."),
    // Not trimmed: the sender is evidence and is compared and stored exactly as received (a `\ufeffbKash` is not bKash).
    sender: noControlChars('sender')
      .min(1)
      .max(64)
      .refine((s) => s.trim() !== '', 'sender must not be blank')
      .describe(
        'Sender address exactly as the phone received it (`bKash`, `16216`), not trimmed or normalised: the service compares it exactly, and a sender with any character outside printable ASCII (a leading or trailing Unicode space, U+FEFF, a zero-width or bidi control) is not a wallet\'s official sender.',
      ),
    body: z.string().min(1).max(MAX_FORWARDED_SMS_LENGTH).describe(`Full text of the SMS, at most ${MAX_FORWARDED_SMS_LENGTH} characters.`),
    received_at: z.iso.datetime({ offset: true }).describe('When the phone received it, ISO 8601 (device clock; an offset is allowed).'),
    sim_slot: z
      .number()
      .int()
      .min(0)
      .max(7)
      .nullable()
      .optional()
      .describe(
        "SIM slot that received it (0-based: Android's `SubscriptionInfo.getSimSlotIndex()` of the SMS's subscription), when the phone knows. Each slot has its own balance chain, and a wallet account bound to a slot is proved only by SMS of that slot (or of an unknown slot).",
      ),
    receiving_number: z
      .string()
      .regex(/^\+?[0-9][0-9 -]{3,30}$/, 'receiving_number must be a phone number: digits, optionally with +, spaces or dashes')
      .max(32)
      .nullable()
      .optional()
      .describe(
        "The number of the SIM that received it (`SubscriptionManager.getPhoneNumber()` on Android 13+, else `SubscriptionInfo.getNumber()`), when Android knows it; many SIMs do not report one, then leave it out. An SMS naming another number than the wallet account's never proves a payment into that account.",
      ),
    sequence: smsSequenceSchema
      .optional()
      .describe(
        "The app's number for this SMS in its counter of the SIM slot (`sim_slot`; no slot is a counter of its own) and `sequence_epoch`: every SMS from an allowed sender of the filter rules, forwarded or screened out on the phone, takes the next number (1, 2, 3...) in the order it arrived. The service asks for any number it has not seen below the highest (docs/recovery.md, \"Sequence numbers\").",
      ),
    part: smsPartSchema.optional(),
  })
  .meta({ id: 'ForwardedSms' });

/** Most sequence ranges one request reports screened. */
export const MAX_SCREENED_SEQUENCE_RANGES = 50;

export const screenedSequenceRangeSchema = z
  .strictObject({
    sim_slot: z.number().int().min(0).max(7).nullable().describe("The counter's SIM slot (0-based); null for SMS whose slot the phone does not know."),
    from: smsSequenceSchema.describe('First number of the range.'),
    to: smsSequenceSchema.describe('Last number of the range (inclusive, at least `from`).'),
  })
  .refine((r) => r.to >= r.from, { message: 'Must be at least `from`', path: ['to'] })
  .meta({ id: 'ScreenedSequenceRange' });

export const forwardRequestSchema = z
  .strictObject({
    messages: z
      .array(forwardedSmsSchema)
      .max(MAX_SMS_BATCH, `At most ${MAX_SMS_BATCH} messages per call`)
      .describe(`1 to ${MAX_SMS_BATCH} SMS that passed the filter rules on the phone (may be empty only when \`screened_sequences\` is not).`),
    device_time: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("The phone's clock when it sent this batch. The service estimates the phone's clock offset from it and corrects the `received_at` times with it when matching."),
    sequence_epoch: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'sequence_epoch must be 1 to 64 letters, digits, `.`, `_` or `-`')
      .optional()
      .describe(
        "Names the app's sequence counters: a new value (e.g. a random id made at install, or when the app's stored counters were lost) tells the service the counters restarted at 1; numbers of different epochs are never compared. Absent: the epoch `default`. Applies to every `sequence` and `screened_sequences` of the request.",
      ),
    screened_sequences: z
      .array(screenedSequenceRangeSchema)
      .max(MAX_SCREENED_SEQUENCE_RANGES, `At most ${MAX_SCREENED_SEQUENCE_RANGES} ranges per call`)
      .optional()
      .describe(
        'Sequence numbers the app gave to SMS from allowed senders that its filter rules screened out on the phone (not forwarded, their text never sent), as ranges per SIM slot. Report them in the same request as, or before, any higher number of the counter; otherwise the service sees them as missing and asks for them.',
      ),
  })
  .superRefine((r, ctx) => {
    if (r.messages.length === 0 && (r.screened_sequences?.length ?? 0) === 0) {
      ctx.addIssue({ code: 'custom', message: 'messages must contain at least one SMS', path: ['messages'] });
    }
  })
  .meta({ id: 'ForwardSmsRequest' });

export const smsMatchStatusSchema = z
  .enum(smsRecordStatuses)
  .describe(
    '`pending` stored, not decided yet; `matched` it completed a payment (`trx_id`): only certain evidence does; `no_match` not from an official sender, no gateway template read it, or money into the wallet that is never a customer\'s payment (a cashback: balance chain evidence only); `no_candidate` parsed, but no payment claims its id and none has its amount; `low_confidence` left for review (see the record\'s `reason_code` and `suggestions`); `balance_mismatch` the reported balance contradicts the phone\'s balance chain, left for review; `money_out` a debit of the wallet (Send Money, Cash Out...): balance chain evidence, never a match; `duplicate` the same SMS was forwarded before (see `duplicate_of`). The rules: docs/matching.md.',
  );

export const screenReasonSchema = z
  .enum(['sender_not_allowed', 'negative_keyword', 'no_positive_keyword'])
  .describe('Which filter rule refused the message.');

export const forwardResultSchema = z
  .object({
    device_message_id: z.string().describe('Echo of the input, to pair answers with messages.'),
    id: z.number().int().nullable().describe('SMS data record id; null for `screened_out` (nothing was stored) and `awaiting_parts`.'),
    match_status: z
      .enum([...smsMatchStatusSchema.options, 'screened_out', 'awaiting_parts'])
      .describe(
        `${smsMatchStatusSchema.description ?? ''} \`screened_out\`: the brand's filter rules refuse this message (a one-time code, PIN or password, a sender that is not allowed, or no positive keyword); the service keeps nothing of it, not even its text. Do not forward it again. \`awaiting_parts\`: a part of a long SMS (\`part\`), kept until its other parts arrive; the part that completes the set (and every part of it forwarded in that request) is answered with the joined SMS's record.`,
      ),
    screen_reason: screenReasonSchema.nullable().describe('For `screened_out`: which rule refused it; otherwise null.'),
    trx_id: z.string().nullable().describe('Service transaction reference of the payment this SMS completed, or null.'),
    duplicate_of: z.number().int().nullable().describe('For `duplicate`: the record first stored with this content.'),
  })
  .meta({ id: 'ForwardedSmsResult' });

export const smsMessagesContract = c.router(
  {
    forward: {
      method: 'POST',
      path: '/sms/messages',
      summary: 'Forward SMS',
      description: [
        `Forwards a batch of up to ${MAX_SMS_BATCH} SMS; the answer has one item per message, in the same order.`,
        'Each SMS is stored once: re-sending a `device_message_id` (a retried batch) stores nothing and answers the stored record as it is now, so retries are safe.',
        'The same text from the same sender forwarded under another id, or by another phone of the brand, is stored as `duplicate` and never completes a payment.',
        'SMS text is stored encrypted.',
        "The service screens every message with the brand's filter rules again (the same rules the phone applies): a message they refuse is answered `screened_out` and nothing of it is stored.",
        'Sequence numbers (`sequence`, `screened_sequences`) are recorded per device, SIM slot and `sequence_epoch`; a number below the highest that was neither forwarded nor reported screened is asked back at once as a `backfill_sms` command with `reason: sequence_gap` naming the numbers (docs/recovery.md). Repeating numbers is harmless.',
      ].join(' '),
      body: forwardRequestSchema,
      responses: { 200: ok(z.array(forwardResultSchema)) },
      metadata: meta({ auth: 'device', tag: 'SMS forwarding' }),
    },
  },
  { pathPrefix: DEVICE_PATH_PREFIX, strictStatusCodes: true },
);
