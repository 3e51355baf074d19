import { AppError } from '../../../contract/common/errors.ts';
import { sql } from 'kysely';
import { type Db } from '../db.ts';
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
  const k = em;
  const reserved = await k
    .selectNoFrom((eb) => eb.fn<string>('nextval', [eb.fn('pg_get_serial_sequence', [eb.val('notifications'), eb.val('id')])]).as('id'))
    .executeTakeFirstOrThrow();
  const id = Number(reserved.id);
  const b = notificationBinding(input.brandId, id);
  // Only for a device of the brand: one INSERT ... SELECT.
  const rows = await k
    .insertInto('notifications')
    .columns(['id', 'device_id', 'title', 'body'])
    .expression(
      k
        .selectFrom('devices')
        .select([
          sql<number>`${id}::bigint`.as('notification_id'),
          'id',
          sql<string>`${cipher.encrypt(title, NOTIFICATION_CONTEXT.title, b)}::text`.as('title'),
          sql<string>`${cipher.encrypt(body, NOTIFICATION_CONTEXT.body, b)}::text`.as('body'),
        ])
        .where('id', '=', input.deviceId)
        .where('brand_id', '=', input.brandId),
    )
    .returning(['id', 'created_at'])
    .execute();
  if (!rows[0]) throw new AppError('DEVICE_NOT_FOUND');
  return { id: rows[0].id, title, body, createdAt: rows[0].created_at };
}

/** The brand is the device's (a device never changes brand). */
export async function listUnreadNotifications(em: Db, cipher: PiiCipher, deviceId: number): Promise<NotificationView[]> {
  const rows = await em
    .selectFrom('notifications as n')
    .innerJoin('devices as d', 'd.id', 'n.device_id')
    .select(['n.id', 'd.brand_id', 'n.title', 'n.body', 'n.created_at'])
    .where('n.device_id', '=', deviceId)
    .where('n.read_at', 'is', null)
    .orderBy('n.created_at', 'desc')
    .orderBy('n.id', 'desc')
    .limit(MAX_UNREAD_LISTED)
    .execute();
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
  const rows = await em
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('device_id', '=', deviceId)
    .where('read_at', 'is', null)
    .execute();
  return Number(rows[0]!.n);
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
  const rows = await em
    .updateTable('notifications')
    .set({ read_at: sql<Date>`now()` })
    .where('device_id', '=', deviceId)
    .where('read_at', 'is', null)
    .where('id', '=', (eb) => eb.fn.any(eb.val([...new Set(ids)])))
    .returning('id')
    .execute();
  return rows.length;
}
