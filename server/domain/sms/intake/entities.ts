import { defineEntity, p } from '@mikro-orm/core';
import { modes, smsRecordStatuses, balanceChainStates, smsResolutions, smsDirections } from '../../../../contract/vocabulary.ts';
import { Brand } from '../../brands/entities.ts';
import { Device } from '../../devices/entities.ts';
import { Gateway } from '../../gateways/entities.ts';
import { Transaction } from '../../payments/entities.ts';
export type { SmsRecordStatus } from '../../../../contract/vocabulary.ts';

/** How an SMS was entered: forwarded by the phone, pasted by an operator, or re-sent on a backfill request (docs/recovery.md). */
export const smsEntries = ['forwarded', 'pasted', 'backfill'] as const;

/** What matching stores about transactions it considered but did not take. */
export type StoredSuggestion = { transaction_id: number; why: string; distance: number | null };

/**
 * A forwarded SMS ("SMS data record"). The sender, the body and
 * `parsedSenderNumber` are PII cipher tokens bound to the brand and the record
 * (record-cipher.ts). The mode is its device's (a trigger sets it on insert).
 * The parsed and match columns are filled by SMS matching.
 */
export const SmsRecord = defineEntity({
  name: 'SmsRecord',
  tableName: 'sms_records',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('sms_records_brand_id_fkey'),
    device: () => p.manyToOne(Device).deleteRule('cascade').foreignKeyName('sms_records_device_id_fkey'),
    /** The phone's own id for the message: a re-sent batch stores nothing twice. */
    deviceMessageId: p.string().length(128),
    /** Keyed hash of brand, sender and text (content-hash.ts): the same SMS again is a duplicate. */
    contentHash: p.string().length(64),
    /** Null once the text expired (`textExpiredAt`). */
    sender: p.text().nullable(),
    /** Null once the text expired (`textExpiredAt`). */
    bodyEncrypted: p.text().nullable(),
    /**
     * When the retention job dropped the sender and the text (RETENTION_SMS_TEXT_DAYS,
     * domain/retention): the parsed evidence, the content hash and the match stay.
     */
    textExpiredAt: p.datetime().nullable(),
    /** Device clock. */
    receivedAt: p.datetime(),
    serverReceivedAt: p.datetime().defaultRaw('now()'),
    simSlot: p.smallint().nullable(),
    /** The number of the SIM that received it, when the phone knows it (E.164 as the app sent it, normalised). */
    receivingNumber: p.string().length(32).nullable(),
    /**
     * The SMS's place in its forwarding request, ordered as the phone received
     * them (its `received_at`, then its position in the request). A balance
     * chain's links whose SMS times tie (a fast clock capped at the server's
     * receipt, whole-second times) are ordered by their request's arrival
     * (`serverReceivedAt`, one instant per request) and then by this, instead
     * of by record id, which is assigned in content-hash order.
     */
    phoneOrder: p.smallint().default(0),
    matchStatus: p.enum(smsRecordStatuses).default('pending'),
    duplicateOf: () => p.manyToOne(SmsRecord).nullable().deleteRule('no action').foreignKeyName('sms_records_duplicate_of_id_fkey'),
    gateway: () => p.manyToOne(Gateway).nullable().deleteRule('no action').foreignKeyName('sms_records_gateway_fk'),
    parsedAmount: p.decimal('string').precision(14).scale(2).nullable(),
    parsedTrxId: p.string().length(64).nullable(),
    parsedSenderNumber: p.text().nullable(),
    transaction: () => p.manyToOne(Transaction).nullable().deleteRule('no action').foreignKeyName('sms_records_transaction_fk'),
    confidence: p.decimal('string').precision(5).scale(4).nullable(),
    candidateIds: p.array<number>((i) => Number(i), (n) => String(n)).columnType('bigint[]').nullable(),
    reason: p.text().nullable(),
    matchedAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
    /** Set when an admin decided a record left for review (sms/matching/review.ts). */
    resolution: p.enum(smsResolutions).nullable(),
    resolvedBy: p.string().length(100).nullable(),
    resolvedAt: p.datetime().nullable(),
    resolutionNote: p.string().length(500).nullable(),
    mode: p.enum(modes).default('live'),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2),
    direction: p.enum(smsDirections).nullable(),
    kind: p.string().length(40).nullable(),
    parsedBalance: p.decimal('string').precision(16).scale(2).nullable(),
    parsedFee: p.decimal('string').precision(14).scale(2).nullable(),
    /** The latest moment the time stated in the SMS's own text can stand for (sms/matching/stated-time.ts), when it states one. */
    statedAt: p.datetime().nullable(),
    walletKey: p.string().length(64).nullable(),
    /** The SMS time matching used: the device clock corrected by its offset, capped at the server's receipt. */
    smsTime: p.datetime().nullable(),
    chainState: p.enum(balanceChainStates).nullable(),
    chainPrevious: () => p.manyToOne(SmsRecord).nullable().deleteRule('no action').foreignKeyName('sms_records_chain_previous_id_fkey'),
    chainExpectedBalance: p.decimal('string').precision(16).scale(2).nullable(),
    /**
     * The wallet's balance after this SMS as its chain counts it: the balance the
     * SMS states, or for a debit that states none (bill pay), the previous link's
     * less the debit. Set: the record is a link of its chain (docs/matching.md).
     */
    chainBalance: p.decimal('string').precision(16).scale(2).nullable(),
    /** What matching read and decided beyond the above (docs/matching.md). */
    reasonCode: p.string().length(40).nullable(),
    suggestions: p.json<StoredSuggestion[]>().defaultRaw(`'[]'::jsonb`),
    entry: p.enum(smsEntries).columnType('varchar(16)').default('forwarded'),
    /** Who pasted it (recovery/paste.ts). */
    enteredBy: p.string().length(120).nullable(),
    operatorName: p.string().length(100).nullable(),
  },
  uniques: [
    { name: 'sms_records_device_id_device_message_id_key', properties: ['device', 'deviceMessageId'] },
    // One original per content, brand and mode, even when two phones race (sms/intake/service.ts).
    { name: 'sms_records_brand_mode_content_original_idx', properties: ['brand', 'mode', 'contentHash'], where: 'duplicate_of_id IS NULL' },
    { name: 'sms_records_one_match_per_transaction', properties: ['transaction'], where: "match_status = 'matched'" },
  ],
  indexes: [
    { name: 'sms_records_balance_review_idx', properties: ['brand', 'createdAt'], where: "match_status = 'balance_mismatch' AND resolved_at IS NULL" },
    { name: 'sms_records_chain_idx', properties: ['device', 'walletKey', 'smsTime', 'serverReceivedAt', 'phoneOrder', 'id'], where: 'chain_balance IS NOT NULL' },
    { name: 'sms_records_parsed_trx_idx', properties: ['brand', 'parsedTrxId'], where: 'parsed_trx_id IS NOT NULL' },
    { name: 'sms_records_pending_idx', properties: ['brand', 'serverReceivedAt'], where: "match_status = 'pending'" },
    { name: 'sms_records_pii_v1_idx', properties: ['id'], where: 'pii_v = 1' },
    { name: 'sms_records_review_idx', properties: ['brand', 'createdAt'], where: "match_status IN ('no_candidate', 'low_confidence') AND resolved_at IS NULL" },
    // The retention job's walk over records whose text is still kept, oldest first.
    { name: 'sms_records_text_kept_idx', properties: ['createdAt'], where: 'text_expired_at IS NULL' },
  ],
  checks: [
    { name: 'sms_records_check', expression: "duplicate_of_id IS NULL OR match_status = 'duplicate'" },
    { name: 'sms_records_confidence_check', expression: 'confidence >= 0 AND confidence <= 1' },
    { name: 'sms_records_matched_names_transaction', expression: "(match_status = 'matched') = (transaction_id IS NOT NULL) AND (match_status <> 'matched' OR matched_at IS NOT NULL)" },
    { name: 'sms_records_pii_v_check', expression: 'pii_v IN (1, 2)' },
    { name: 'sms_records_resolution_complete', expression: '(resolution IS NULL) = (resolved_by IS NULL) AND (resolution IS NULL) = (resolved_at IS NULL)' },
    { name: 'sms_records_sim_slot_check', expression: 'sim_slot >= 0 AND sim_slot <= 7' },
    { name: 'sms_records_text_expired_check', expression: '(text_expired_at IS NULL) = (sender IS NOT NULL AND body_encrypted IS NOT NULL)' },
  ],
});

export type SmsRecordEntity = InstanceType<typeof SmsRecord.class>;

/**
 * One part of a long (concatenated) SMS the phone forwarded on its own
 * (`part` of a forwarded SMS), kept until every part of its set has arrived
 * (sms/intake/parts.ts). A set is the parts of one device with the same
 * `groupHash` (keyed hash of brand, sender exactly as received, SIM slot,
 * reference and count: the sender stays unreadable) and `partCount`. The
 * sender and text are PII cipher tokens bound to the brand and the part
 * (parts.ts); they are cleared once the set is joined into one SMS record
 * (`joinedRecord`), and the part is kept as a tombstone for 24 hours so the
 * phone's retry of it is answered with that record.
 */
export const SmsPart = defineEntity({
  name: 'SmsPart',
  tableName: 'sms_parts',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('sms_parts_brand_id_fkey'),
    device: () => p.manyToOne(Device).deleteRule('cascade').foreignKeyName('sms_parts_device_id_fkey'),
    deviceMessageId: p.string().length(128),
    groupHash: p.string().length(64),
    reference: p.integer(),
    partCount: p.smallint(),
    partIndex: p.smallint(),
    sender: p.text().nullable(),
    bodyEncrypted: p.text().nullable(),
    receivedAt: p.datetime(),
    simSlot: p.smallint().nullable(),
    receivingNumber: p.string().length(32).nullable(),
    joinedRecord: () => p.manyToOne(SmsRecord).nullable().deleteRule('cascade').foreignKeyName('sms_parts_joined_record_id_fkey'),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  uniques: [
    { name: 'sms_parts_device_message_key', properties: ['device', 'deviceMessageId'] },
    // One waiting part per place in its set: a part sent again (under any id) is kept once.
    { name: 'sms_parts_waiting_key', properties: ['device', 'groupHash', 'partCount', 'partIndex'], where: 'joined_record_id IS NULL' },
  ],
  indexes: [{ name: 'sms_parts_created_idx', properties: ['createdAt'] }],
  checks: [
    { name: 'sms_parts_place_check', expression: 'part_index >= 1 AND part_index <= part_count AND part_count >= 2 AND part_count <= 16' },
    { name: 'sms_parts_joined_cleared_check', expression: '(joined_record_id IS NULL) = (body_encrypted IS NOT NULL)' },
  ],
});
