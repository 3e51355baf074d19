import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { createPairingCode } from '../devices/pairing.ts';
import { revokeDevice } from '../devices/service.ts';
import { createNotification, type NotificationView } from '../notifications/service.ts';
import { enqueueOutboundSms } from '../outbound-sms/service.ts';
import { pgDate, pgDateOrNull } from '../../infra/database/pg-date.ts';
import { getSetting } from '../settings/service.ts';
import { getAdminBrand } from './brands.ts';
import { scopeParam } from '../brands/scope.ts';

export type DevicePresence = 'online' | 'offline' | 'revoked';

export interface AdminDevice {
  id: number;
  uuid: string;
  brand_id: number;
  mode: 'live' | 'test';
  name: string;
  status: 'active' | 'revoked';
  presence: DevicePresence;
  last_seen_at: string | null;
  last_heartbeat_at: string | null;
  offline_since: string | null;
  battery_level: number | null;
  is_charging: boolean | null;
  network: string | null;
  app_version: string | null;
  paired_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
}

interface DeviceRow {
  id: string;
  uuid: string;
  brand_id: string;
  mode: 'live' | 'test';
  name: string;
  status: 'active' | 'revoked';
  presence: DevicePresence;
  last_seen_at: string | Date | null;
  last_heartbeat_at: string | Date | null;
  offline_since: string | Date | null;
  battery_level: number | null;
  is_charging: boolean | null;
  network: string | null;
  app_version: string | null;
  paired_at: string | Date;
  revoked_at: string | Date | null;
  revoked_reason: string | null;
}

const iso = (v: string | Date | null) => pgDateOrNull(v)?.toISOString() ?? null;

function toDevice(r: DeviceRow): AdminDevice {
  return {
    id: Number(r.id),
    uuid: r.uuid,
    brand_id: Number(r.brand_id),
    mode: r.mode,
    name: r.name,
    status: r.status,
    presence: r.presence,
    last_seen_at: iso(r.last_seen_at),
    last_heartbeat_at: iso(r.last_heartbeat_at),
    offline_since: iso(r.offline_since),
    battery_level: r.battery_level,
    is_charging: r.is_charging,
    network: r.network,
    app_version: r.app_version,
    paired_at: pgDate(r.paired_at).toISOString(),
    revoked_at: iso(r.revoked_at),
    revoked_reason: r.revoked_reason,
  };
}

/**
 * Presence is computed now, by the same rule as the offline detector (silent
 * for longer than `device_offline_minutes`, counting from pairing when it never
 * called), so the admin sees a dead phone before the next detector run.
 */
const PRESENCE = `CASE WHEN d.status = 'revoked' THEN 'revoked'
  WHEN COALESCE(d.last_seen_at, d.paired_at) >= now() - make_interval(mins => ?) THEN 'online' ELSE 'offline' END`;

const SELECT = `SELECT d.id, d.uuid, d.brand_id, d.mode, d.name, d.status, ${PRESENCE} AS presence, d.last_seen_at, d.last_heartbeat_at, d.offline_since,
  d.battery_level, d.is_charging, d.network, d.app_version, d.paired_at, d.revoked_at, d.revoked_reason FROM devices d`;

export async function getAdminDevice(em: EntityManager, deviceId: number): Promise<AdminDevice> {
  const minutes = await getSetting(em, 'device_offline_minutes');
  const rows = await em.execute<DeviceRow[]>(`${SELECT} WHERE d.id = ?`, [minutes, deviceId]);
  if (!rows[0]) throw new AppError('DEVICE_NOT_FOUND');
  return toDevice(rows[0]);
}

/** Newest pairing first. */
export async function listAdminDevices(
  em: EntityManager,
  f: { page: number; perPage: number; brandId?: number; brandIds?: number[] | null; mode?: 'live' | 'test'; presence?: DevicePresence },
): Promise<{ items: AdminDevice[]; total: number }> {
  const minutes = await getSetting(em, 'device_offline_minutes');
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.brandId !== undefined) {
    where.push('d.brand_id = ?');
    params.push(f.brandId);
  }
  if (f.brandIds) {
    where.push('d.brand_id IN (?)');
    params.push(scopeParam(f.brandIds));
  }
  if (f.mode) {
    where.push('d.mode = ?');
    params.push(f.mode);
  }
  if (f.presence) {
    where.push(`(${PRESENCE}) = ?`);
    params.push(minutes, f.presence);
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const [count] = await em.execute<Array<{ n: string }>>(`SELECT count(*) AS n FROM devices d ${clause}`, params);
  const rows = await em.execute<DeviceRow[]>(`${SELECT} ${clause} ORDER BY d.paired_at DESC, d.id DESC LIMIT ? OFFSET ?`, [
    minutes,
    ...params,
    f.perPage,
    (f.page - 1) * f.perPage,
  ]);
  return { items: rows.map(toDevice), total: Number(count!.n) };
}

/** Revoking a revoked device changes nothing and is not recorded again. */
export async function revokeDeviceAudited(em: EntityManager, who: AuditActor, deviceId: number): Promise<AdminDevice> {
  return withAudit(em, who, async (tx) => {
    const locked = await tx.execute<Array<{ brand_id: string; status: string }>>('SELECT brand_id, status FROM devices WHERE id = ? FOR UPDATE', [deviceId]);
    if (!locked[0]) throw new AppError('DEVICE_NOT_FOUND');
    const brandId = Number(locked[0].brand_id);
    await revokeDevice(tx, brandId, deviceId, 'admin');
    const after = await getAdminDevice(tx, deviceId);
    return {
      result: after,
      audit:
        locked[0].status === 'revoked'
          ? null
          : { action: 'device.revoke', targetType: 'device', targetId: deviceId, brandId, before: { status: 'active' }, after: { status: after.status } },
    };
  });
}

/** The code is in the result once; the audit row has the code's id and expiry only. */
export async function createPairingCodeAudited(
  em: EntityManager,
  who: AuditActor,
  brandId: number,
  opts: { ttlMinutes?: number; mode?: 'live' | 'test' },
): Promise<{ id: number; brand_id: number; mode: 'live' | 'test'; code: string; expires_at: string }> {
  return withAudit(em, who, async (tx) => {
    const created = await createPairingCode(tx, brandId, opts);
    const expiresAt = created.expiresAt.toISOString();
    return {
      result: { id: created.id, brand_id: brandId, mode: created.mode, code: created.code, expires_at: expiresAt },
      audit: { action: 'pairing_code.create', targetType: 'pairing_code', targetId: created.id, brandId, after: { mode: created.mode, expires_at: expiresAt } },
    };
  });
}

/** A push notification for a device; its brand is the device's own. The audit row has ids only. */
export async function sendNotificationAudited(
  em: EntityManager,
  cipher: PiiCipher,
  who: AuditActor,
  deviceId: number,
  input: { title: string; body: string },
): Promise<NotificationView & { deviceId: number }> {
  return withAudit(em, who, async (tx) => {
    const rows = await tx.execute<Array<{ brand_id: string }>>('SELECT brand_id FROM devices WHERE id = ?', [deviceId]);
    if (!rows[0]) throw new AppError('DEVICE_NOT_FOUND');
    const brandId = Number(rows[0].brand_id);
    const n = await createNotification(tx, cipher, { brandId, deviceId, ...input });
    return { result: { ...n, deviceId }, audit: { action: 'notification.send', targetType: 'notification', targetId: n.id, brandId, after: { device_id: deviceId } } };
  });
}

/** The number and text go to the queue encrypted; the audit row has ids only. */
export async function enqueueOutboundSmsAudited(
  em: EntityManager,
  cipher: PiiCipher,
  who: AuditActor,
  brandId: number,
  input: { phone: string; message: string; deviceId?: number; ttlMinutes?: number },
): Promise<{ id: number; brand_id: number; device_id: number | null; status: 'pending'; expires_at: string }> {
  return withAudit(em, who, async (tx) => {
    await getAdminBrand(tx, brandId);
    const queued = await enqueueOutboundSms(tx, cipher, { brandId, deviceId: input.deviceId ?? null, phone: input.phone, message: input.message, ttlMinutes: input.ttlMinutes });
    const result = { id: queued.id, brand_id: brandId, device_id: input.deviceId ?? null, status: 'pending' as const, expires_at: queued.expiresAt.toISOString() };
    return { result, audit: { action: 'outbound_sms.enqueue', targetType: 'outbound_sms', targetId: queued.id, brandId, after: { status: 'pending', device_id: result.device_id } } };
  });
}
