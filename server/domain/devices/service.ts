import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { requestBackfill } from '../recovery/backfill.ts';
import { raiseAlert } from '../alerts/raise.ts';
import { getSetting } from '../settings/service.ts';

/**
 * `last_seen_at` is refreshed at most this often: presence is minutes-grained
 * (the offline threshold defaults to an hour), and skipping the write keeps an
 * authenticated call at one cheap statement.
 */
const LAST_SEEN_RESOLUTION_SECONDS = 60;

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
export async function authenticateDevice(em: EntityManager, deviceUuid: string): Promise<AuthenticatedDevice | null> {
  const rows = await em.execute<Array<{ id: string; brand_id: string; mode: Mode }>>(
    `WITH found AS (
       SELECT d.id, d.brand_id, d.mode, d.last_seen_at
         FROM devices d JOIN brands b ON b.id = d.brand_id
        WHERE d.uuid = ? AND d.status = 'active' AND b.status = 'active'
     ), touched AS (
       UPDATE devices SET last_seen_at = now()
        WHERE id IN (SELECT id FROM found WHERE last_seen_at IS NULL OR last_seen_at < now() - make_interval(secs => ?))
          AND status = 'active'
     )
     SELECT id, brand_id, mode FROM found`,
    [deviceUuid, LAST_SEEN_RESOLUTION_SECONDS],
  );
  const row = rows[0];
  return row ? { deviceId: Number(row.id), brandId: Number(row.brand_id), mode: row.mode } : null;
}

/** Heartbeats further apart than this ask the phone to re-send what it received meanwhile (docs/recovery.md). */
const HEARTBEAT_GAP_MINUTES = 15;

/**
 * One `battery_low` alert per episode: raised when a heartbeat takes the level
 * from at or above the threshold (or unknown) to below it while not charging;
 * the episode ends when a heartbeat reports the level back at or above it.
 */
async function raiseBatteryAlert(tx: EntityManager, row: { id: string; brand_id: string; uuid: string; name: string; mode: string; battery_level: number | null; is_charging: boolean | null; old_level: number | null }): Promise<void> {
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
}

/**
 * Stores the heartbeat time and whatever the app reported. Values the app did
 * not send keep their previous value rather than being wiped.
 */
export async function recordHeartbeat(em: EntityManager, deviceId: number, input: HeartbeatInput = {}): Promise<{ serverTime: Date }> {
  const now = await em.transactional(async (tx) => {
    // The row is locked and its previous level and heartbeat read in the same statement, so two
    // heartbeats racing across the battery threshold see one crossing between them, and a long
    // gap since the previous heartbeat (SMS may have been missed meanwhile) is seen once.
    const rows = await tx.execute<Array<{
      id: string; brand_id: string; uuid: string; name: string; mode: string; battery_level: number | null; is_charging: boolean | null;
      old_level: number | null; previous_heartbeat_at: Date | null;
    }>>(
      `UPDATE devices d SET
          last_heartbeat_at = now(),
          last_seen_at = now(),
          battery_level = COALESCE(?, d.battery_level),
          is_charging = COALESCE(?, d.is_charging),
          network = COALESCE(?, d.network),
          app_version = COALESCE(?, d.app_version),
          updated_at = now()
        FROM (SELECT id, battery_level AS old_level, last_heartbeat_at AS previous_heartbeat_at FROM devices WHERE id = ? FOR UPDATE) o
        WHERE d.id = o.id AND d.status = 'active'
        RETURNING d.id, d.brand_id, d.uuid, d.name, d.mode, d.battery_level, d.is_charging, o.old_level, o.previous_heartbeat_at`,
      [input.batteryLevel ?? null, input.isCharging ?? null, input.network ?? null, input.appVersion ?? null, deviceId],
    );
    // Revoked between authentication and here: answer as authentication would have.
    const row = rows[0];
    if (!row) throw new AppError('UNAUTHORIZED');
    await raiseBatteryAlert(tx, row);
    const at = new Date();
    const previous = row.previous_heartbeat_at ? new Date(row.previous_heartbeat_at) : null;
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
export async function revokeDevice(em: EntityManager, brandId: number, deviceId: number, reason = 'admin'): Promise<void> {
  const rows = await em.execute(
    `UPDATE devices SET status = 'revoked', revoked_at = COALESCE(revoked_at, now()), revoked_reason = COALESCE(revoked_reason, ?), refresh_jti = NULL, updated_at = now()
      WHERE id = ? AND brand_id = ? RETURNING id`,
    [reason.slice(0, 64), deviceId, brandId],
  );
  if (rows.length === 0) throw new AppError('DEVICE_NOT_FOUND');
}
