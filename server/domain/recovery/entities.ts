import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { Device } from '../devices/entities.ts';
import { backfillStatuses, backfillReasons } from '../../../contract/vocabulary.ts';

/** A request to a phone to re-send a window of its inbox (backfill.ts, docs/recovery.md). */
export const BackfillRequest = defineEntity({
  name: 'BackfillRequest',
  tableName: 'backfill_requests',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand).foreignKeyName('backfill_requests_brand_id_fkey'),
    device: () => p.manyToOne(Device).foreignKeyName('backfill_requests_device_id_fkey'),
    windowFrom: p.datetime(),
    windowTo: p.datetime(),
    reason: p.enum(backfillReasons).columnType('varchar(32)'),
    status: p.enum(backfillStatuses).columnType('varchar(16)').default('pending'),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime().defaultRaw('now()'),
    requestedBy: p.string().length(120).nullable(),
    /** Only SMS of these senders are asked for (`payment_submitted`: the gateway's official senders); null: every allowed sender. */
    senders: p.array().columnType('text[]').nullable(),
    resentCount: p.integer().nullable(),
    deliveredAt: p.datetime().nullable(),
    answeredAt: p.datetime().nullable(),
    failedAt: p.datetime().nullable(),
    /** For `sequence_gap`: the counter (SIM slot, -1 for no slot; epoch) and the numbers asked (sequences.ts). */
    sequenceSlot: p.smallint().nullable(),
    sequenceEpoch: p.string().length(64).nullable(),
    sequences: p.array<number>((i) => Number(i), (n) => String(n)).columnType('integer[]').nullable(),
    /** Set when operator alerts picked up the failure (retry-backfill.job.ts). */
    reportedAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { name: 'backfill_requests_brand', columns: [{ name: 'brand_id' }, { name: 'created_at', sort: 'DESC' }] },
    { name: 'backfill_requests_open', properties: ['device', 'nextAttemptAt'], where: "status IN ('pending', 'delivered')" },
    { name: 'backfill_requests_unreported', properties: ['failedAt'], where: "status = 'failed' AND reported_at IS NULL" },
  ],
  checks: [{ name: 'backfill_requests_check', expression: 'window_to > window_from' }],
});

/**
 * One sequence counter of a phone (sequences.ts, docs/recovery.md): the
 * numbers seen per (device, SIM slot, epoch), as multiranges, so a counter is
 * one row however many SMS it numbered and a repeated number changes nothing.
 */
export const SmsSequenceCounter = defineEntity({
  name: 'SmsSequenceCounter',
  tableName: 'sms_sequence_counters',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    device: () => p.manyToOne(Device).foreignKeyName('sms_sequence_counters_device_id_fkey'),
    /** SIM slot, -1 for SMS whose slot the phone does not know. */
    simSlot: p.smallint(),
    epoch: p.string().length(64),
    /** Numbers of SMS the service stored (or refused by its own rules). */
    forwarded: p.string().columnType('int4multirange').defaultRaw(`'{}'::int4multirange`),
    /** Numbers the phone reported screened out by its filter rules. */
    screened: p.string().columnType('int4multirange').defaultRaw(`'{}'::int4multirange`),
    /** Missing numbers already asked back in a `sequence_gap` backfill. */
    requested: p.string().columnType('int4multirange').defaultRaw(`'{}'::int4multirange`),
    highest: p.integer(),
    firstSeenAt: p.datetime().defaultRaw('now()'),
    lastSeenAt: p.datetime().defaultRaw('now()'),
  },
  uniques: [{ name: 'sms_sequence_counters_key', properties: ['device', 'simSlot', 'epoch'] }],
  indexes: [{ name: 'sms_sequence_counters_recent', properties: ['device', 'lastSeenAt'] }],
});
