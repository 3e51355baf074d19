import { smsResolutions } from '../../../contract/admin/sms-records.ts';
import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { Device } from '../devices/entities.ts';

export const smsRecordStatuses = ['pending', 'matched', 'no_match', 'no_candidate', 'low_confidence', 'duplicate', 'balance_mismatch', 'money_out'] as const;
export type SmsRecordStatus = (typeof smsRecordStatuses)[number];

/**
 * A forwarded SMS ("SMS data record"). The sender, the body and
 * `parsedSenderNumber` are PII cipher tokens bound to the brand and the record
 * (record-cipher.ts).
 * The parsed and match columns are filled by SMS matching.
 */
export const SmsRecord = defineEntity({
  name: 'SmsRecord',
  tableName: 'sms_records',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand),
    device: () => p.manyToOne(Device),
    deviceMessageId: p.string().length(128),
    contentHash: p.string().length(64),
    sender: p.text(),
    bodyEncrypted: p.text(),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2),
    /** Device clock. */
    receivedAt: p.datetime(),
    serverReceivedAt: p.datetime().onCreate(() => new Date()),
    simSlot: p.smallint().nullable(),
    matchStatus: p.enum(smsRecordStatuses).default('pending'),
    duplicateOf: () => p.manyToOne(SmsRecord).nullable(),
    gatewayId: p.bigint('number').nullable(),
    parsedAmount: p.decimal('string').precision(14).scale(2).nullable(),
    parsedTrxId: p.string().length(64).nullable(),
    parsedSenderNumber: p.text().nullable(),
    transactionId: p.bigint('number').nullable(),
    confidence: p.decimal('string').precision(5).scale(4).nullable(),
    candidateIds: p.array<number>((i) => Number(i), (n) => String(n)).columnType('bigint[]').nullable(),
    reason: p.text().nullable(),
    /** What matching read and decided beyond the above (docs/matching.md). */
    reasonCode: p.string().length(40).nullable(),
    suggestions: p.json<Array<{ transaction_id: number; why: string; distance: number | null }>>().default('[]'),
    direction: p.enum(['in', 'out'] as const).nullable(),
    kind: p.string().length(40).nullable(),
    parsedBalance: p.decimal('string').precision(16).scale(2).nullable(),
    parsedFee: p.decimal('string').precision(14).scale(2).nullable(),
    walletKey: p.string().length(64).nullable(),
    /** The SMS time matching used: the device clock corrected by its offset, capped at the server's receipt. */
    smsTime: p.datetime().nullable(),
    chainState: p.enum(['first', 'follows', 'mismatch', 'impossible', 'unreadable', 'after_break'] as const).nullable(),
    chainPreviousId: p.bigint('number').nullable(),
    chainExpectedBalance: p.decimal('string').precision(16).scale(2).nullable(),
    matchedAt: p.datetime().nullable(),
    /** Set when an admin decided a record left for review (sms/review.ts). */
    resolution: p.enum(smsResolutions).nullable(),
    resolvedBy: p.string().length(100).nullable(),
    resolvedAt: p.datetime().nullable(),
    resolutionNote: p.string().length(500).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type SmsRecordEntity = InstanceType<typeof SmsRecord.class>;
