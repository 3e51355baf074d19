import { sql } from 'kysely';
import type { DevicePresence, Mode } from '../../../../contract/vocabulary.ts';
import type { Db } from '../../db.ts';
import { scopeParam } from '../../brands/queries.ts';

/** Devices as the admin API and the console read them (devices/admin.ts). */

/**
 * Presence is computed now, by the same rule as the offline detector (silent
 * for longer than `device_offline_minutes`, counting from pairing when it never
 * called), so the admin sees a dead phone before the next detector run.
 */
function presence(minutes: number) {
  return sql<DevicePresence>`CASE WHEN d.status = 'revoked' THEN 'revoked'
  WHEN COALESCE(d.last_seen_at, d.paired_at) >= now() - make_interval(mins => ${minutes}) THEN 'online' ELSE 'offline' END`;
}

const fromDevices = (em: Db) => em.selectFrom('devices as d');

function deviceColumns(minutes: number) {
  return [
    'd.id', 'd.uuid', 'd.brand_id', 'd.mode', 'd.name', 'd.status', presence(minutes).as('presence'), 'd.last_seen_at', 'd.last_heartbeat_at', 'd.offline_since',
    'd.battery_level', 'd.is_charging', 'd.network', 'd.app_version', 'd.sms_permission', 'd.battery_optimization_ignored', 'd.last_sms_seen_at', 'd.protocol', 'd.paired_at', 'd.revoked_at', 'd.revoked_reason',
  ] as const;
}

const selectDevices = (em: Db, minutes: number) => fromDevices(em).select(deviceColumns(minutes));

export type AdminDeviceRow = Awaited<ReturnType<ReturnType<typeof selectDevices>['executeTakeFirstOrThrow']>>;

export async function adminDeviceRow(em: Db, deviceId: number, offlineMinutes: number): Promise<AdminDeviceRow | undefined> {
  return selectDevices(em, offlineMinutes).where('d.id', '=', deviceId).executeTakeFirst();
}

export interface AdminDeviceFilter {
  page: number;
  perPage: number;
  brandId?: number;
  brandIds?: number[] | null;
  mode?: Mode;
  presence?: DevicePresence;
}

/** A page of devices, newest pairing first, and how many match in all. */
export async function adminDevicePage(em: Db, f: AdminDeviceFilter, minutes: number): Promise<{ rows: AdminDeviceRow[]; total: number }> {
  let q = fromDevices(em);
  if (f.brandId !== undefined) q = q.where('d.brand_id', '=', f.brandId);
  if (f.brandIds) q = q.where('d.brand_id', 'in', scopeParam(f.brandIds));
  if (f.mode) q = q.where('d.mode', '=', f.mode);
  if (f.presence) q = q.where(presence(minutes), '=', f.presence);
  const { n } = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select(deviceColumns(minutes))
    .orderBy('d.paired_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(f.perPage)
    .offset((f.page - 1) * f.perPage)
    .execute();
  return { rows, total: Number(n) };
}

/** A device's presence changes, newest first, and how many in all; undefined for an unknown device. */
export async function presenceChangePage(em: Db, deviceId: number, page: { page: number; perPage: number }) {
  const device = await em.selectFrom('devices').select('id').where('id', '=', deviceId).executeTakeFirst();
  if (!device) return undefined;
  const ofDevice = em.selectFrom('device_presence_changes').where('device_id', '=', deviceId);
  const { n } = await ofDevice.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await ofDevice
    .select(['id', 'status', 'changed_at', 'last_seen_at', 'last_heartbeat_at', 'battery_level', 'is_charging', 'network'])
    .orderBy('changed_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.perPage)
    .offset((page.page - 1) * page.perPage)
    .execute();
  return { rows, total: Number(n) };
}

/** Locks the device's row; its brand and status. */
export async function lockDevice(tx: Db, deviceId: number) {
  return tx.selectFrom('devices').select(['brand_id', 'status']).where('id', '=', deviceId).forUpdate().executeTakeFirst();
}

export async function deviceBrand(db: Db, deviceId: number) {
  return db.selectFrom('devices').select('brand_id').where('id', '=', deviceId).executeTakeFirst();
}
