import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { alertStatuses, alertTypes, type AlertType } from '../../../contract/vocabulary.ts';

export { alertTypes as ALERT_TYPES, type AlertType };

/**
 * One operator alert (one episode of a brand's problem: the unique key drops
 * repeats), written with its delivery job in the transaction of its cause.
 */
export const Alert = defineEntity({
  name: 'Alert',
  tableName: 'alerts',
  uniques: [{ name: 'alerts_brand_id_type_dedupe_key_key', properties: ['brand', 'type', 'dedupeKey'] }],
  indexes: [{ name: 'alerts_brand_created_idx', columns: [{ name: 'brand' }, { name: 'createdAt', sort: 'DESC' }] }],
  checks: [
    { name: 'alerts_attempts_check', expression: 'attempts >= 0' },
    { name: 'alerts_dedupe_key_check', expression: 'length(dedupe_key) >= 1 AND length(dedupe_key) <= 200' },
    { name: 'alerts_subject_check', expression: 'length(subject) >= 1 AND length(subject) <= 200' },
  ],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand).foreignKeyName('alerts_brand_id_fkey').deleteRule('cascade'),
    type: p.enum(alertTypes).columnType('text'),
    dedupeKey: p.text(),
    subject: p.text(),
    details: p.json<Record<string, string | number | boolean | null>>().defaultRaw(`'{}'::jsonb`),
    status: p.enum(alertStatuses).default('pending'),
    /** Delivery attempts so far (each channel try counts). */
    attempts: p.integer().default(0),
    /** The last SMTP error code, never the message (it can hold addresses). */
    lastError: p.text().nullable(),
    deliveredAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

/** A brand's alert switches: the types it does not want raised. */
export const AlertBrandSettings = defineEntity({
  name: 'AlertBrandSettings',
  tableName: 'alert_brand_settings',
  properties: {
    brand: () => p.oneToOne(Brand).primary().owner().foreignKeyName('alert_brand_settings_brand_id_fkey').deleteRule('cascade').updateRule('no action'),
    disabledTypes: p.array<AlertType>().columnType('text[]').defaultRaw(`'{}'::text[]`),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
