import { AppError } from '../../../contract/common/errors.ts';
import type { DeviceProtocol, DevicePresence, DeviceStatus, Mode, PhoneHealthState, PresenceChangeStatus } from '../../../contract/vocabulary.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { createPairingCode } from './pairing.ts';
import { revokeDevice } from './service.ts';
import { createNotification, type NotificationView } from '../notifications/service.ts';
import { enqueueOutboundSms } from '../outbound-sms/service.ts';
import { type Db } from '../db.ts';
import { getSetting } from '../settings/service.ts';
import { phoneHealth } from './diagnostics.ts';
import { getAdminBrand } from '../brands/admin.ts';
import { adminDevicePage, adminDeviceRow, deviceBrand, lockDevice, presenceChangePage, type AdminDeviceRow, type AdminDeviceFilter } from './queries/admin.ts';


export interface AdminDevice {
  id: number;
  uuid: string;
  brand_id: number;
  mode: Mode;
  name: string;
  status: DeviceStatus;
  presence: DevicePresence;
  last_seen_at: string | null;
  last_heartbeat_at: string | null;
  offline_since: string | null;
  battery_level: number | null;
  is_charging: boolean | null;
  network: string | null;
  app_version: string | null;
  diagnostics: {
    health: PhoneHealthState;
    problems: string[];
    sms_permission: boolean | null;
    battery_optimization_ignored: boolean | null;
    last_sms_seen_at: string | null;
  };
  protocol: DeviceProtocol;
  paired_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
}

function toDevice(r: AdminDeviceRow): AdminDevice {
  const health = phoneHealth({ smsPermission: r.sms_permission, batteryOptimizationIgnored: r.battery_optimization_ignored });
  return {
    id: r.id,
    uuid: r.uuid,
    brand_id: r.brand_id,
    mode: r.mode,
    name: r.name,
    status: r.status,
    presence: r.presence,
    last_seen_at: r.last_seen_at?.toISOString() ?? null,
    last_heartbeat_at: r.last_heartbeat_at?.toISOString() ?? null,
    offline_since: r.offline_since?.toISOString() ?? null,
    battery_level: r.battery_level,
    is_charging: r.is_charging,
    network: r.network,
    app_version: r.app_version,
    diagnostics: {
      health: health.state,
      problems: health.problems,
      sms_permission: r.sms_permission,
      battery_optimization_ignored: r.battery_optimization_ignored,
      last_sms_seen_at: r.last_sms_seen_at?.toISOString() ?? null,
    },
    protocol: r.protocol,
    paired_at: r.paired_at.toISOString(),
    revoked_at: r.revoked_at?.toISOString() ?? null,
    revoked_reason: r.revoked_reason,
  };
}

export async function getAdminDevice(em: Db, deviceId: number): Promise<AdminDevice> {
  const minutes = await getSetting(em, 'device_offline_minutes');
  const row = await adminDeviceRow(em, deviceId, minutes);
  if (!row) throw new AppError('DEVICE_NOT_FOUND');
  return toDevice(row);
}

export interface AdminPresenceChange {
  id: number;
  status: PresenceChangeStatus;
  changed_at: string;
  last_seen_at: string | null;
  last_heartbeat_at: string | null;
  battery_level: number | null;
  is_charging: boolean | null;
  network: string | null;
}

/** A device's presence changes, newest first; an unknown device is DEVICE_NOT_FOUND (brand scope is the route guard's). */
export async function listPresenceHistory(em: Db, deviceId: number, page: { page: number; perPage: number }): Promise<{ items: AdminPresenceChange[]; total: number }> {
  const page_ = await presenceChangePage(em, deviceId, page);
  if (!page_) throw new AppError('DEVICE_NOT_FOUND');
  const { rows, total } = page_;
  const items = rows.map((r) => ({
    id: r.id,
    status: r.status,
    changed_at: r.changed_at.toISOString(),
    last_seen_at: r.last_seen_at?.toISOString() ?? null,
    last_heartbeat_at: r.last_heartbeat_at?.toISOString() ?? null,
    battery_level: r.battery_level,
    is_charging: r.is_charging,
    network: r.network,
  }));
  return { items, total };
}

/** Newest pairing first. */
export async function listAdminDevices(
  em: Db,
  f: AdminDeviceFilter,
): Promise<{ items: AdminDevice[]; total: number }> {
  const minutes = await getSetting(em, 'device_offline_minutes');
  const { rows, total } = await adminDevicePage(em, f, minutes);
  return { items: rows.map(toDevice), total };
}

/** Revoking a revoked device changes nothing and is not recorded again. */
export async function revokeDeviceAudited(em: Db, who: AuditActor, deviceId: number): Promise<AdminDevice> {
  return withAudit(em, who, async (tx) => {
    const locked = await lockDevice(tx, deviceId);
    if (!locked) throw new AppError('DEVICE_NOT_FOUND');
    const brandId = locked.brand_id;
    await revokeDevice(tx, brandId, deviceId, 'admin');
    const after = await getAdminDevice(tx, deviceId);
    return {
      result: after,
      audit:
        locked.status === 'revoked'
          ? null
          : { action: 'device.revoke', targetType: 'device', targetId: deviceId, brandId, before: { status: 'active' }, after: { status: after.status } },
    };
  });
}

/** The code is in the result once; the audit row has the code's id and expiry only. */
export async function createPairingCodeAudited(
  em: Db,
  who: AuditActor,
  brandId: number,
  opts: { ttlMinutes?: number; mode?: Mode },
): Promise<{ id: number; brand_id: number; mode: Mode; code: string; expires_at: string }> {
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
  em: Db,
  cipher: PiiCipher,
  who: AuditActor,
  deviceId: number,
  input: { title: string; body: string },
): Promise<NotificationView & { deviceId: number }> {
  return withAudit(em, who, async (tx) => {
    const device = await deviceBrand(tx, deviceId);
    if (!device) throw new AppError('DEVICE_NOT_FOUND');
    const brandId = device.brand_id;
    const n = await createNotification(tx, cipher, { brandId, deviceId, ...input });
    return { result: { ...n, deviceId }, audit: { action: 'notification.send', targetType: 'notification', targetId: n.id, brandId, after: { device_id: deviceId } } };
  });
}

/** The number and text go to the queue encrypted; the audit row has ids only. */
export async function enqueueOutboundSmsAudited(
  em: Db,
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
