import { sql } from 'kysely';
import { scopeParam } from '../../brands/scope.ts';
import type { Db, Tx } from '../../db.ts';

/** The phones' SMS sequence counters (sequences.ts, docs/recovery.md "Sequence numbers"). */

/**
 * Adds numbers to a counter (created on first use) and locks it for the
 * transaction; returns the numbers below its highest that are neither
 * forwarded, screened nor asked for yet, as multirange text. Multirange union
 * makes a repeated number change nothing, and the row lock makes two requests
 * of one counter see each other's numbers.
 */
export async function addToCounter(
  tx: Tx,
  q: { deviceId: number; simSlot: number; epoch: string; forwarded: string; screened: string; highest: number },
): Promise<{ id: number; unasked: string; first_seen_at: Date }> {
  // Raw: INSERT ... ON CONFLICT with multirange arithmetic on the old and the excluded row.
  const r = await sql<{ id: number; unasked: string; first_seen_at: Date }>`
    INSERT INTO sms_sequence_counters AS c (device_id, sim_slot, epoch, forwarded, screened, highest)
    VALUES (${q.deviceId}, ${q.simSlot}, ${q.epoch}, ${q.forwarded}::int4multirange, ${q.screened}::int4multirange, ${q.highest})
    ON CONFLICT (device_id, sim_slot, epoch) DO UPDATE SET
      forwarded = c.forwarded + excluded.forwarded,
      screened = c.screened + excluded.screened,
      highest = GREATEST(c.highest, excluded.highest),
      last_seen_at = now()
    RETURNING id, first_seen_at,
      (int4multirange(int4range(1, highest, '[]')) - forwarded - screened - requested)::text AS unasked`.execute(tx);
  const row = r.rows[0]!;
  return { ...row, id: Number(row.id) };
}

/** Marks numbers of the counter as asked for. */
export async function markRequested(tx: Tx, q: { id: number; numbers: string }): Promise<void> {
  await tx
    .updateTable('sms_sequence_counters')
    .set({ requested: sql<string>`requested + ${q.numbers}::int4multirange` })
    .where('id', '=', q.id)
    .execute();
}

/** A `sequence_gap` backfill request naming the numbers, for an active device; false when the device is not active. */
export async function insertSequenceRequest(
  tx: Tx,
  q: { deviceId: number; from: Date; to: Date; simSlot: number; epoch: string; numbers: number[] },
): Promise<boolean> {
  const rows = await tx
    .insertInto('backfill_requests')
    .columns(['brand_id', 'device_id', 'window_from', 'window_to', 'reason', 'sequence_slot', 'sequence_epoch', 'sequences'])
    .expression(
      tx
        .selectFrom('devices')
        .select(['brand_id', 'id'])
        .select([
          sql<Date>`${q.from}::timestamptz`.as('window_from'),
          sql<Date>`${q.to}::timestamptz`.as('window_to'),
          sql<'sequence_gap'>`'sequence_gap'::varchar`.as('reason'),
          sql<number>`${q.simSlot}::smallint`.as('sequence_slot'),
          sql<string>`${q.epoch}::varchar`.as('sequence_epoch'),
          sql<number[]>`${q.numbers}::integer[]`.as('sequences'),
        ])
        .where('id', '=', q.deviceId)
        .where('status', '=', 'active'),
    )
    .returning('id')
    .execute();
  return rows.length > 0;
}

export interface CounterRow {
  device_id: number;
  sim_slot: number;
  epoch: string;
  highest: number;
  /** Numbers below the highest neither forwarded nor screened, as multirange text. */
  missing: string;
  screened_count: number;
  forwarded_count: number;
  first_seen_at: Date;
  last_seen_at: Date;
}

/** The counters of the devices that numbered an SMS since `since`. */
export async function recentCounters(db: Db, q: { deviceIds: number[]; since: Date }): Promise<CounterRow[]> {
  if (q.deviceIds.length === 0) return [];
  // Raw: multirange difference and the count of the numbers in a multirange.
  const r = await sql<CounterRow>`
    SELECT device_id, sim_slot, epoch, highest, first_seen_at, last_seen_at,
      (int4multirange(int4range(1, highest, '[]')) - forwarded - screened)::text AS missing,
      (SELECT COALESCE(sum(upper(x) - lower(x)), 0) FROM unnest(screened) x)::int AS screened_count,
      (SELECT COALESCE(sum(upper(x) - lower(x)), 0) FROM unnest(forwarded) x)::int AS forwarded_count
    FROM sms_sequence_counters
    WHERE device_id = ANY(${q.deviceIds}::bigint[]) AND last_seen_at >= ${q.since}::timestamptz
    ORDER BY device_id, sim_slot, last_seen_at DESC`.execute(db);
  return r.rows.map((row) => ({ ...row, device_id: Number(row.device_id) }));
}

/** The devices (of those given) that ever sent a sequence number. */
export async function devicesWithCounters(db: Db, deviceIds: number[]): Promise<Set<number>> {
  if (deviceIds.length === 0) return new Set();
  const rows = await db.selectFrom('sms_sequence_counters').select('device_id').distinct().where('device_id', 'in', deviceIds).execute();
  return new Set(rows.map((r) => Number(r.device_id)));
}

/** Whether the device exists. */
export async function deviceExists(db: Db, deviceId: number): Promise<boolean> {
  return (await db.selectFrom('devices').select('id').where('id', '=', deviceId).executeTakeFirst()) !== undefined;
}

/** The active devices, by id, filtered by brand, brand scope and mode. */
export async function activeDeviceIds(db: Db, f: { brandId?: number; brandIds: number[] | null; mode?: 'live' | 'test' }): Promise<number[]> {
  let q = db.selectFrom('devices').select('id').where('status', '=', 'active');
  if (f.brandId !== undefined) q = q.where('brand_id', '=', f.brandId);
  if (f.brandIds) q = q.where('brand_id', 'in', scopeParam(f.brandIds));
  if (f.mode) q = q.where('mode', '=', f.mode);
  return (await q.orderBy('id').execute()).map((r) => Number(r.id));
}
