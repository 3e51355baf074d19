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
    createdAt: p.datetime().onCreate(() => new Date()),
    readAt: p.datetime().nullable(),
  },
});

export type NotificationEntity = InstanceType<typeof Notification.class>;
