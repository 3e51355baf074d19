import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
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
  em: EntityManager,
  cipher: PiiCipher,
  input: { brandId: number; deviceId: number; title: string; body: string },
): Promise<NotificationView> {
  const title = input.title.trim();
  const body = input.body.trim();
  if (title === '' || title.length > MAX_TITLE_LENGTH) throw new AppError('VALIDATION_ERROR', `Must be 1 to ${MAX_TITLE_LENGTH} characters`, { field: 'title' });
  if (body === '' || body.length > MAX_BODY_LENGTH) throw new AppError('VALIDATION_ERROR', `Must be 1 to ${MAX_BODY_LENGTH} characters`, { field: 'body' });
  const [reserved] = await em.execute<Array<{ id: string }>>("SELECT nextval(pg_get_serial_sequence('notifications', 'id')) AS id");
  const b = notificationBinding(input.brandId, reserved!.id);
  const rows = await em.execute<Array<{ id: string; created_at: Date }>>(
    `INSERT INTO notifications (id, device_id, title, body)
     SELECT ?, id, ?, ? FROM devices WHERE id = ? AND brand_id = ?
     RETURNING id, created_at`,
    [reserved!.id, cipher.encrypt(title, NOTIFICATION_CONTEXT.title, b), cipher.encrypt(body, NOTIFICATION_CONTEXT.body, b), input.deviceId, input.brandId],
  );
  if (!rows[0]) throw new AppError('DEVICE_NOT_FOUND');
  return { id: Number(rows[0].id), title, body, createdAt: new Date(rows[0].created_at) };
}

/** The brand is the device's (a device never changes brand). */
export async function listUnreadNotifications(em: EntityManager, cipher: PiiCipher, deviceId: number): Promise<NotificationView[]> {
  const rows = await em.execute<Array<{ id: string; brand_id: string; title: string; body: string; created_at: Date }>>(
    `SELECT n.id, d.brand_id, n.title, n.body, n.created_at
       FROM notifications n JOIN devices d ON d.id = n.device_id
      WHERE n.device_id = ? AND n.read_at IS NULL
      ORDER BY n.created_at DESC, n.id DESC
      LIMIT ?`,
    [deviceId, MAX_UNREAD_LISTED],
  );
  return rows.map((r) => {
    const b = notificationBinding(r.brand_id, r.id);
    return {
      id: Number(r.id),
      title: cipher.decrypt(r.title, NOTIFICATION_CONTEXT.title, b),
      body: cipher.decrypt(r.body, NOTIFICATION_CONTEXT.body, b),
      createdAt: new Date(r.created_at),
    };
  });
}

export async function countUnreadNotifications(em: EntityManager, deviceId: number): Promise<number> {
  const rows = await em.execute<Array<{ n: string }>>('SELECT count(*) AS n FROM notifications WHERE device_id = ? AND read_at IS NULL', [deviceId]);
  return Number(rows[0]!.n);
}

/**
 * Marks the caller's own unread notifications among `ids` as read and returns
 * how many it marked. Ids of other devices (of any brand), unknown ids and
 * notifications already read are left alone and not counted: the scope is in
 * the UPDATE itself, not in a check before it.
 */
export async function acknowledgeNotifications(em: EntityManager, deviceId: number, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  if (ids.length > MAX_ACK_IDS) throw new AppError('VALIDATION_ERROR', `At most ${MAX_ACK_IDS} ids per call`, { field: 'ids' });
  const rows = await em.execute(
    `UPDATE notifications SET read_at = now()
      WHERE device_id = ? AND read_at IS NULL AND id = ANY(ARRAY[?]::bigint[])
      RETURNING id`,
    [deviceId, [...new Set(ids)]],
  );
  return rows.length;
}
