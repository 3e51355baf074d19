import { sql, type Selectable } from 'kysely';
import type { DB, Db } from '../db.ts';
import type { OutboundSmsStatus } from './entities.ts';

/** True when the device is an active one of the brand. */
export async function isActiveBrandDevice(db: Db, brandId: number, deviceId: number): Promise<boolean> {
  const found = await db.selectFrom('devices').select('id').where('id', '=', deviceId).where('brand_id', '=', brandId).where('status', '=', 'active').execute();
  return found.length > 0;
}

/** Takes the next outbound SMS id from the table's sequence, before the row that will carry it exists. */
export async function reserveOutboundSmsId(db: Db): Promise<number> {
  const reserved = await db
    .selectNoFrom((eb) => eb.fn<string>('nextval', [eb.fn('pg_get_serial_sequence', [eb.val('outbound_sms'), eb.val('id')])]).as('id'))
    .executeTakeFirstOrThrow();
  return Number(reserved.id);
}

/** Stores an item (phone and message already encrypted), expiring `ttlMinutes` from now. */
export async function insertOutboundSms(
  db: Db,
  row: { id: number; brandId: number; deviceId: number | null; phoneEncrypted: string; messageEncrypted: string; ttlMinutes: number },
): Promise<{ id: number; expires_at: Date }> {
  return db
    .insertInto('outbound_sms')
    .values({
      id: row.id,
      brand_id: row.brandId,
      device_id: row.deviceId,
      phone_encrypted: row.phoneEncrypted,
      message_encrypted: row.messageEncrypted,
      expires_at: sql<Date>`now() + make_interval(mins => ${row.ttlMinutes})`,
    })
    .returning(['id', 'expires_at'])
    .executeTakeFirstOrThrow();
}

/**
 * Leases up to `limit` waiting items of the brand (addressed to the device or to
 * any device of its mode), oldest first, to the device. `FOR UPDATE SKIP LOCKED`:
 * concurrent polls take disjoint sets.
 */
export async function leaseWaiting(db: Db, caller: { brandId: number; deviceId: number }, limit: number, leaseMinutes: number) {
  return db
    .with('picked', (qb) =>
      qb
        .selectFrom('outbound_sms')
        .select('id')
        .where('brand_id', '=', caller.brandId)
        .where('status', '=', 'pending')
        .where('expires_at', '>', sql<Date>`now()`)
        .where((eb) => eb.or([eb('device_id', 'is', null), eb('device_id', '=', caller.deviceId)]))
        // A brand-wide item goes only to a device of its mode (a device's own items have its mode).
        .where('mode', '=', (eb) => eb.selectFrom('devices as d').select('d.mode').where('d.id', '=', caller.deviceId))
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .updateTable('outbound_sms as o')
    .from('picked')
    .set({
      status: 'leased',
      leased_by_device_id: caller.deviceId,
      leased_at: sql<Date>`now()`,
      lease_expires_at: sql<Date>`now() + make_interval(mins => ${leaseMinutes})`,
      attempts: sql<number>`o.attempts + 1`,
      updated_at: sql<Date>`now()`,
    })
    .whereRef('o.id', '=', 'picked.id')
    .returning(['o.id', 'o.phone_encrypted', 'o.message_encrypted', 'o.created_at', 'o.lease_expires_at', 'o.expires_at'])
    .execute();
}

const STATE_COLUMNS = ['id', 'status', 'sent_at', 'delivered_at', 'failed_at', 'failure_reason', 'updated_at'] as const;
export type StateRow = Pick<Selectable<DB['outbound_sms']>, (typeof STATE_COLUMNS)[number]>;

/**
 * Moves the caller's item to the reported status if it is in one of `from`: one
 * conditional UPDATE. Each report sets only its own times (and a failure its
 * reason); the others keep theirs.
 */
export async function applyReport(
  db: Db,
  caller: { brandId: number; deviceId: number },
  input: { id: number; status: 'sent' | 'delivered' | 'failed'; reason: string | null },
  from: readonly OutboundSmsStatus[],
): Promise<StateRow | undefined> {
  const now = sql<Date>`now()`;
  const status = input.status;
  const updated = await db
    .updateTable('outbound_sms')
    .set({
      status,
      ...(status === 'sent' || status === 'delivered' ? { sent_at: sql<Date>`COALESCE(sent_at, now())` } : {}),
      ...(status === 'delivered' ? { delivered_at: now } : {}),
      ...(status === 'failed' ? { failed_at: now, failure_reason: input.reason } : {}),
      lease_expires_at: null,
      updated_at: now,
    })
    .where('id', '=', input.id)
    .where('brand_id', '=', caller.brandId)
    .where('leased_by_device_id', '=', caller.deviceId)
    .where('status', 'in', [...from])
    .returning(STATE_COLUMNS)
    .execute();
  return updated[0];
}

/** The item as the caller may see it: its brand's, leased to it last. */
export async function selectCallerItem(db: Db, caller: { brandId: number; deviceId: number }, id: number): Promise<StateRow | undefined> {
  const rows = await db
    .selectFrom('outbound_sms')
    .select(STATE_COLUMNS)
    .where('id', '=', id)
    .where('brand_id', '=', caller.brandId)
    .where('leased_by_device_id', '=', caller.deviceId)
    .execute();
  return rows[0];
}

/** Leases past their expiry back to `pending`; how many. */
export async function returnExpiredLeases(db: Db): Promise<number> {
  const rows = await db
    .updateTable('outbound_sms')
    .set({ status: 'pending', lease_expires_at: null, updated_at: sql<Date>`now()` })
    .where('status', '=', 'leased')
    .where('lease_expires_at', '<=', sql<Date>`now()`)
    .returning('id')
    .execute();
  return rows.length;
}

/** Pending items past their time-to-live to `expired`; how many. */
export async function expirePending(db: Db): Promise<number> {
  const rows = await db
    .updateTable('outbound_sms')
    .set({ status: 'expired', expired_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('status', '=', 'pending')
    .where('expires_at', '<=', sql<Date>`now()`)
    .returning('id')
    .execute();
  return rows.length;
}
