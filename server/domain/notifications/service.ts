import { AppError } from '../../../contract/common/errors.ts';
import { type Db } from '../db.ts';
import { countUnread, insertNotificationForBrandDevice, markRead, reserveNotificationId, selectUnread } from './queries.ts';
import type { PiiBinding, PiiCipher } from '../../infra/crypto/pii-cipher.ts';

/** Most unread notifications one read returns (newest first). */
const MAX_UNREAD_LISTED = 100;
/** Most ids one acknowledgement takes. */
const MAX_ACK_IDS = 100;
const MAX_TITLE_LENGTH = 200;
const MAX_BODY_LENGTH = 2000;

export interface NotificationView {
  id: number;
  title: string;
  body: string;
  createdAt: Date;
}

/**
 * Title and body can carry a customer's name or a payment's details, so both are
 * stored as cipher tokens, bound to the device's brand and the notification's
 * id (reserved from the id sequence before the INSERT: the table has no other
 * key known in advance).
 */
export const NOTIFICATION_CONTEXT = { title: 'notification.title', body: 'notification.body' } as const;

export function notificationBinding(brandId: number | string, id: number | string): PiiBinding {
  return { brandId, row: id };
}

/** Queues a push notification for one device of the brand (admin API and CLI). */
export async function createNotification(
  em: Db,
  cipher: PiiCipher,
  input: { brandId: number; deviceId: number; title: string; body: string },
): Promise<NotificationView> {
  const title = input.title.trim();
  const body = input.body.trim();
  if (title === '' || title.length > MAX_TITLE_LENGTH) throw new AppError('VALIDATION_ERROR', `Must be 1 to ${MAX_TITLE_LENGTH} characters`, { field: 'title' });
  if (body === '' || body.length > MAX_BODY_LENGTH) throw new AppError('VALIDATION_ERROR', `Must be 1 to ${MAX_BODY_LENGTH} characters`, { field: 'body' });
  const id = await reserveNotificationId(em);
  const b = notificationBinding(input.brandId, id);
  // Only for a device of the brand.
  const row = await insertNotificationForBrandDevice(em, {
    id,
    brandId: input.brandId,
    deviceId: input.deviceId,
    title: cipher.encrypt(title, NOTIFICATION_CONTEXT.title, b),
    body: cipher.encrypt(body, NOTIFICATION_CONTEXT.body, b),
  });
  if (!row) throw new AppError('DEVICE_NOT_FOUND');
  return { id: row.id, title, body, createdAt: row.created_at };
}

/** The brand is the device's (a device never changes brand). */
export async function listUnreadNotifications(em: Db, cipher: PiiCipher, deviceId: number): Promise<NotificationView[]> {
  const rows = await selectUnread(em, deviceId, MAX_UNREAD_LISTED);
  return rows.map((r) => {
    const b = notificationBinding(r.brand_id, r.id);
    return {
      id: r.id,
      title: cipher.decrypt(r.title, NOTIFICATION_CONTEXT.title, b),
      body: cipher.decrypt(r.body, NOTIFICATION_CONTEXT.body, b),
      createdAt: r.created_at,
    };
  });
}

export async function countUnreadNotifications(em: Db, deviceId: number): Promise<number> {
  return countUnread(em, deviceId);
}

/**
 * Marks the caller's own unread notifications among `ids` as read and returns
 * how many it marked. Ids of other devices (of any brand), unknown ids and
 * notifications already read are left alone and not counted: the scope is in
 * the UPDATE itself, not in a check before it.
 */
export async function acknowledgeNotifications(em: Db, deviceId: number, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  if (ids.length > MAX_ACK_IDS) throw new AppError('VALIDATION_ERROR', `At most ${MAX_ACK_IDS} ids per call`, { field: 'ids' });
  return markRead(em, deviceId, [...new Set(ids)]);
}
