import { defineEntity, p } from '@mikro-orm/core';
import { modes } from '../../../contract/vocabulary.ts';
import { Device } from '../devices/entities.ts';

/**
 * A push notification for one device; `readAt` is set when the device
 * acknowledges it. Title and body are PII cipher tokens (notifications/service.ts).
 */
export const Notification = defineEntity({
  name: 'Notification',
  tableName: 'notifications',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    device: () => p.manyToOne(Device).deleteRule('cascade').foreignKeyName('notifications_device_id_fkey'),
    title: p.text(),
    body: p.text(),
    createdAt: p.datetime().defaultRaw('now()'),
    readAt: p.datetime().nullable(),
    /** Its device's mode (a trigger sets it). */
    mode: p.enum(modes).default('live'),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2),
  },
  indexes: [
    { name: 'notifications_pii_v1_idx', properties: ['id'], where: 'pii_v = 1' },
    { name: 'notifications_unread_idx', properties: ['device', 'createdAt'], where: 'read_at IS NULL' },
  ],
  checks: [{ name: 'notifications_pii_v_check', expression: 'pii_v IN (1, 2)' }],
});

