import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { Device } from '../devices/entities.ts';
import { outboundSmsStatuses } from '../../../contract/device/sms-queue.ts';
export type { OutboundSmsStatus } from '../../../contract/device/sms-queue.ts';

/**
 * An SMS queued by the merchant panel for a device to send through its SIM.
 * Destination and text are PII cipher tokens (contexts `outbound_sms.phone`,
 * `outbound_sms.message`).
 */
export const OutboundSms = defineEntity({
  name: 'OutboundSms',
  tableName: 'outbound_sms',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand),
    /** Null: any device of the brand may send it. */
    device: () => p.manyToOne(Device).nullable(),
    phoneEncrypted: p.text(),
    messageEncrypted: p.text(),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2),
    status: p.enum(outboundSmsStatuses).default('pending'),
    leasedByDevice: () => p.manyToOne(Device).nullable(),
    leasedAt: p.datetime().nullable(),
    leaseExpiresAt: p.datetime().nullable(),
    attempts: p.integer().default(0),
    expiresAt: p.datetime(),
    failureReason: p.string().length(500).nullable(),
    sentAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    failedAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type OutboundSmsEntity = InstanceType<typeof OutboundSms.class>;
