import { defineEntity, p } from '@mikro-orm/core';
import { Device } from '../devices/entities.ts';

/** A push notification for one device; `readAt` is set when the device acknowledges it. */
export const Notification = defineEntity({
  name: 'Notification',
  tableName: 'notifications',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    device: () => p.manyToOne(Device),
    title: p.string().length(200),
    body: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    readAt: p.datetime().nullable(),
  },
});

export type NotificationEntity = InstanceType<typeof Notification.class>;
