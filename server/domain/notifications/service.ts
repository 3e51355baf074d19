import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';

/** Most unread notifications one read returns (newest first). */
export const MAX_UNREAD_LISTED = 100;
/** Most ids one acknowledgement takes. */
export const MAX_ACK_IDS = 100;
export const MAX_TITLE_LENGTH = 200;
export const MAX_BODY_LENGTH = 2000;

export interface NotificationView {
  id: number;
  title: string;
  body: string;
  createdAt: Date;
}

/** Queues a push notification for one device of the brand (admin API and CLI). */
export async function createNotification(
  em: EntityManager,
  input: { brandId: number; deviceId: number; title: string; body: string },
): Promise<NotificationView> {
  const title = input.title.trim();
  const body = input.body.trim();
  if (title === '' || title.length > MAX_TITLE_LENGTH) throw new AppError('VALIDATION_ERROR', `Must be 1 to ${MAX_TITLE_LENGTH} characters`, { field: 'title' });
  if (body === '' || body.length > MAX_BODY_LENGTH) throw new AppError('VALIDATION_ERROR', `Must be 1 to ${MAX_BODY_LENGTH} characters`, { field: 'body' });
  const rows = await em.execute<Array<{ id: string; created_at: Date }>>(
    `INSERT INTO notifications (device_id, title, body)
     SELECT id, ?, ? FROM devices WHERE id = ? AND brand_id = ?
     RETURNING id, created_at`,
    [title, body, input.deviceId, input.brandId],
  );
  if (!rows[0]) throw new AppError('DEVICE_NOT_FOUND');
  return { id: Number(rows[0].id), title, body, createdAt: new Date(rows[0].created_at) };
}

export async function listUnreadNotifications(em: EntityManager, deviceId: number): Promise<NotificationView[]> {
  const rows = await em.execute<Array<{ id: string; title: string; body: string; created_at: Date }>>(
    `SELECT id, title, body, created_at FROM notifications
      WHERE device_id = ? AND read_at IS NULL
      ORDER BY created_at DESC, id DESC
      LIMIT ?`,
    [deviceId, MAX_UNREAD_LISTED],
  );
  return rows.map((r) => ({ id: Number(r.id), title: r.title, body: r.body, createdAt: new Date(r.created_at) }));
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
