import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { requestBackfill } from '../recovery/backfill.ts';

/**
 * `last_seen_at` is refreshed at most this often: presence is minutes-grained
 * (the offline threshold defaults to an hour), and skipping the write keeps an
 * authenticated call at one cheap statement.
 */
export const LAST_SEEN_RESOLUTION_SECONDS = 60;

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
export const HEARTBEAT_GAP_MINUTES = 15;

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
  // The previous heartbeat is read in the same statement: a long gap means SMS may have been missed meanwhile.
  const rows = await em.execute<Array<{ id: string; previous_heartbeat_at: Date | null }>>(
    `WITH prev AS (SELECT id, last_heartbeat_at FROM devices WHERE id = ? AND status = 'active' FOR UPDATE)
     UPDATE devices d SET
        last_heartbeat_at = now(),
        last_seen_at = now(),
        battery_level = COALESCE(?, battery_level),
        is_charging = COALESCE(?, is_charging),
        network = COALESCE(?, network),
        app_version = COALESCE(?, app_version),
        updated_at = now()
       FROM prev WHERE d.id = prev.id
      RETURNING d.id, prev.last_heartbeat_at AS previous_heartbeat_at`,
    [deviceId, input.batteryLevel ?? null, input.isCharging ?? null, input.network ?? null, input.appVersion ?? null],
  );
  // Revoked between authentication and here: answer as authentication would have.
  if (!rows[0]) throw new AppError('UNAUTHORIZED');
  const previous = rows[0].previous_heartbeat_at ? new Date(rows[0].previous_heartbeat_at) : null;
  const now = new Date();
  if (previous && now.getTime() - previous.getTime() > HEARTBEAT_GAP_MINUTES * 60_000) {
    await requestBackfill(em, { deviceId, from: previous, to: now, reason: 'heartbeat_gap' });
  }
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
