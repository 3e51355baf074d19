import { defineEntity, p } from '@mikro-orm/core';
import { modes, outboundSmsStatuses } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
import { Device } from '../devices/entities.ts';
export type { OutboundSmsStatus } from '../../../contract/vocabulary.ts';

/**
 * An SMS queued by the merchant panel for a device to send through its SIM.
 * Destination and text are PII cipher tokens (contexts `outbound_sms.phone`,
 * `outbound_sms.message`).
 */
export const OutboundSms = defineEntity({
  name: 'OutboundSms',
  tableName: 'outbound_sms',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('outbound_sms_brand_id_fkey'),
    /** Null: any device of the brand may send it. */
    device: () => p.manyToOne(Device).nullable().deleteRule('cascade').foreignKeyName('outbound_sms_device_id_fkey'),
    phoneEncrypted: p.text(),
    messageEncrypted: p.text(),
    status: p.enum(outboundSmsStatuses).default('pending'),
    /** The device that holds (or last held) the lease; reports are accepted from it only. */
    leasedByDevice: () => p.manyToOne(Device).nullable().deleteRule('set null').foreignKeyName('outbound_sms_leased_by_device_id_fkey'),
    leasedAt: p.datetime().nullable(),
    leaseExpiresAt: p.datetime().nullable(),
    attempts: p.integer().default(0),
    expiresAt: p.datetime(),
    failureReason: p.string().length(500).nullable(),
    sentAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    failedAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
    /** Its device's mode when addressed to one (a trigger sets it), else live. */
    mode: p.enum(modes).default('live'),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2),
  },
  indexes: [
    { name: 'outbound_sms_lease_idx', properties: ['leaseExpiresAt'], where: "status = 'leased'" },
    { name: 'outbound_sms_pending_idx', properties: ['brand', 'createdAt', 'id'], where: "status = 'pending'" },
    { name: 'outbound_sms_pii_v1_idx', properties: ['id'], where: 'pii_v = 1' },
    { name: 'outbound_sms_ttl_idx', properties: ['expiresAt'], where: "status IN ('pending', 'leased')" },
  ],
  checks: [
    { name: 'outbound_sms_check', expression: "status <> 'leased' OR (leased_by_device_id IS NOT NULL AND lease_expires_at IS NOT NULL)" },
    { name: 'outbound_sms_pii_v_check', expression: 'pii_v IN (1, 2)' },
  ],
});

