import { defineEntity, p } from '@mikro-orm/core';
import { Device } from '../devices/entities.ts';

/**
 * A push notification for one device; `readAt` is set when the device
 * acknowledges it. Title and body are PII cipher tokens (notifications/service.ts).
 */
export const Notification = defineEntity({
  name: 'Notification',
  tableName: 'notifications',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    device: () => p.manyToOne(Device),
    title: p.text(),
    body: p.text(),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2),
    createdAt: p.datetime().onCreate(() => new Date()),
    readAt: p.datetime().nullable(),
  },
});

export type NotificationEntity = InstanceType<typeof Notification.class>;
