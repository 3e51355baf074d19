import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { transaction, type Db } from '../db.ts';
import { revokeBrandDevice, selectActiveDeviceAndTouch, storeHeartbeat } from './queries/session.ts';
import { requestBackfill } from '../recovery/backfill.ts';
import { raiseAlert } from '../alerts/raise.ts';
import { getSetting } from '../settings/service.ts';
import { phoneHealth } from './diagnostics.ts';

export interface AuthenticatedDevice {
  deviceId: number;
  brandId: number;
  /** The mode of the pairing code it paired with: it verifies only payments of this mode. */
  mode: Mode;
}

/**
 * The active device behind an access token's subject, or null when it is
 * unknown, revoked or its brand is disabled. Checked against the database on
 * every call, so a revocation takes effect at once. Refreshes presence in the
 * same statement.
 */
export async function authenticateDevice(em: Db, deviceUuid: string): Promise<AuthenticatedDevice | null> {
  const row = await selectActiveDeviceAndTouch(em, deviceUuid);
  return row ? { deviceId: row.id, brandId: row.brand_id, mode: row.mode } : null;
}

/** Heartbeats further apart than this ask the phone to re-send what it received meanwhile (docs/recovery.md). */
const HEARTBEAT_GAP_MINUTES = 15;

/**
 * One `battery_low` alert per episode: raised when a heartbeat takes the level
 * from at or above the threshold (or unknown) to below it while not charging;
 * the episode ends when a heartbeat reports the level back at or above it.
 */
async function raiseBatteryAlert(tx: Db, row: { id: number; brand_id: number; uuid: string; name: string; mode: string; battery_level: number | null; is_charging: boolean | null; old_level: number | null }): Promise<void> {
  if (row.battery_level === null || row.is_charging === true) return;
  const threshold = await getSetting(tx, 'battery_low_percent');
  if (row.battery_level >= threshold || (row.old_level !== null && row.old_level < threshold)) return;
  const at = new Date().toISOString();
  await raiseAlert(tx, {
    brandId: Number(row.brand_id),
    type: 'battery_low',
    dedupeKey: `device:${row.id}:battery:${at}`,
    subject: `Device "${row.name}" battery is low (${row.battery_level}%)`,
    details: { device_uuid: row.uuid, device_name: row.name, mode: row.mode, battery_level: row.battery_level, threshold },
  });
}

export interface HeartbeatInput {
  batteryLevel?: number | null;
  isCharging?: boolean | null;
  network?: string | null;
  appVersion?: string | null;
  smsPermission?: boolean | null;
  batteryOptimizationIgnored?: boolean | null;
  lastSmsSeenAt?: Date | null;
}

/**
 * One `device_cannot_receive_sms` alert per episode: raised when a heartbeat
 * reports the SMS permission missing after it was granted (or unknown); the
 * episode ends when a heartbeat reports it granted again.
 */
async function raiseCannotReceiveAlert(
  tx: Db,
  row: { id: number; brand_id: number; uuid: string; name: string; mode: string; sms_permission: boolean | null; battery_optimization_ignored: boolean | null; old_sms_permission: boolean | null },
): Promise<void> {
  const health = phoneHealth({ smsPermission: row.sms_permission, batteryOptimizationIgnored: row.battery_optimization_ignored });
  if (health.state !== 'cannot_receive' || row.old_sms_permission === false) return;
  await raiseAlert(tx, {
    brandId: Number(row.brand_id),
    type: 'device_cannot_receive_sms',
    dedupeKey: `device:${row.id}:sms-permission:${new Date().toISOString()}`,
    subject: `Device "${row.name}" cannot receive SMS: the app has no SMS permission`,
    details: { device_uuid: row.uuid, device_name: row.name, mode: row.mode },
  });
}

/**
 * Stores the heartbeat time and whatever the app reported. Values the app did
 * not send keep their previous value rather than being wiped.
 */
export async function recordHeartbeat(em: Db, deviceId: number, input: HeartbeatInput = {}): Promise<{ serverTime: Date }> {
  const now = await transaction(em, async (tx) => {
    // The row is locked and its previous level and heartbeat read in the same statement, so two
    // heartbeats racing across the battery threshold see one crossing between them, and a long
    // gap since the previous heartbeat (SMS may have been missed meanwhile) is seen once.
    const row = await storeHeartbeat(tx, deviceId, {
      batteryLevel: input.batteryLevel ?? null,
      isCharging: input.isCharging ?? null,
      network: input.network ?? null,
      appVersion: input.appVersion ?? null,
      smsPermission: input.smsPermission ?? null,
      batteryOptimizationIgnored: input.batteryOptimizationIgnored ?? null,
      lastSmsSeenAt: input.lastSmsSeenAt ?? null,
    });
    // Revoked between authentication and here: answer as authentication would have.
    if (!row) throw new AppError('UNAUTHORIZED');
    await raiseBatteryAlert(tx, row);
    await raiseCannotReceiveAlert(tx, row);
    const at = new Date();
    const previous = row.last_heartbeat_at;
    if (previous && at.getTime() - previous.getTime() > HEARTBEAT_GAP_MINUTES * 60_000) {
      await requestBackfill(tx, { deviceId, from: previous, to: at, reason: 'heartbeat_gap' });
    }
    return at;
  });
  return { serverTime: now };
}

/**
 * Revokes a device of the brand (admin and CLI). Its access token is refused on
 * its next call and its refresh token can no longer be exchanged.
 */
export async function revokeDevice(em: Db, brandId: number, deviceId: number, reason = 'admin'): Promise<void> {
  const revoked = await revokeBrandDevice(em, brandId, deviceId, reason.slice(0, 64));
  if (!revoked) throw new AppError('DEVICE_NOT_FOUND');
}
