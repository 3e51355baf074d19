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
