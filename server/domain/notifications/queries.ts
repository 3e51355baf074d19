import { sql } from 'kysely';
import type { Db } from '../db.ts';

/** Takes the next notification id from the table's sequence, before the row that will carry it exists. */
export async function reserveNotificationId(db: Db): Promise<number> {
  const reserved = await db
    .selectNoFrom((eb) => eb.fn<string>('nextval', [eb.fn('pg_get_serial_sequence', [eb.val('notifications'), eb.val('id')])]).as('id'))
    .executeTakeFirstOrThrow();
  return Number(reserved.id);
}

/**
 * Stores a notification (already encrypted) for the device, only if the device
 * is the brand's: one INSERT ... SELECT. Undefined when it is not.
 */
export async function insertNotificationForBrandDevice(
  db: Db,
  row: { id: number; brandId: number; deviceId: number; title: string; body: string },
): Promise<{ id: number; created_at: Date } | undefined> {
  const rows = await db
    .insertInto('notifications')
    .columns(['id', 'device_id', 'title', 'body'])
    .expression(
      db
        .selectFrom('devices')
        .select([sql<number>`${row.id}::bigint`.as('notification_id'), 'id', sql<string>`${row.title}::text`.as('title'), sql<string>`${row.body}::text`.as('body')])
        .where('id', '=', row.deviceId)
        .where('brand_id', '=', row.brandId),
    )
    .returning(['id', 'created_at'])
    .execute();
  return rows[0];
}

/** The device's unread notifications, newest first, with the device's brand (their binding). */
export async function selectUnread(db: Db, deviceId: number, limit: number) {
  return db
    .selectFrom('notifications as n')
    .innerJoin('devices as d', 'd.id', 'n.device_id')
    .select(['n.id', 'd.brand_id', 'n.title', 'n.body', 'n.created_at'])
    .where('n.device_id', '=', deviceId)
    .where('n.read_at', 'is', null)
    .orderBy('n.created_at', 'desc')
    .orderBy('n.id', 'desc')
    .limit(limit)
    .execute();
}

export async function countUnread(db: Db, deviceId: number): Promise<number> {
  const rows = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('device_id', '=', deviceId)
    .where('read_at', 'is', null)
    .execute();
  return Number(rows[0]!.n);
}

/** Marks the device's own unread notifications among `ids` read; how many it marked. */
export async function markRead(db: Db, deviceId: number, ids: readonly number[]): Promise<number> {
  const rows = await db
    .updateTable('notifications')
    .set({ read_at: sql<Date>`now()` })
    .where('device_id', '=', deviceId)
    .where('read_at', 'is', null)
    .where('id', '=', (eb) => eb.fn.any(eb.val([...ids])))
    .returning('id')
    .execute();
  return rows.length;
}
