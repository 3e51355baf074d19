import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { sql } from 'kysely';
import { prepared, transaction, type Db } from '../db.ts';
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
 * authenticateDevice's statement, compiled once (db.ts `prepared`): every device
 * call runs it. One statement: the look-up, and the presence write in a
 * data-modifying CTE (skipped while recent).
 */
const deviceByUuid = prepared((k, $: { uuid: string }) =>
  k
    .with('found', (qb) =>
      qb
        .selectFrom('devices as d')
        .innerJoin('brands as b', 'b.id', 'd.brand_id')
        .select(['d.id', 'd.brand_id', 'd.mode', 'd.last_seen_at'])
        .where('d.uuid', '=', $.uuid)
        .where('d.status', '=', 'active')
        .where('b.status', '=', 'active'),
    )
    .with('touched', (qb) =>
      qb
        .updateTable('devices')
        .set({ last_seen_at: sql<Date>`now()` })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('found')
            .select('found.id')
            .where((e) => e.or([e('found.last_seen_at', 'is', null), e('found.last_seen_at', '<', sql<Date>`now() - make_interval(secs => ${LAST_SEEN_RESOLUTION_SECONDS})`)])),
        )
        .where('status', '=', 'active'),
    )
    .selectFrom('found')
    .select(['found.id', 'found.brand_id', 'found.mode']),
);

/**
 * The active device behind an access token's subject, or null when it is
 * unknown, revoked or its brand is disabled. Checked against the database on
 * every call, so a revocation takes effect at once. Refreshes presence in the
 * same statement.
 */
export async function authenticateDevice(em: Db, deviceUuid: string): Promise<AuthenticatedDevice | null> {
  const row = await deviceByUuid.executeTakeFirst(em, { uuid: deviceUuid });
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
    const row = await tx
      .updateTable('devices as d')
      .from((eb) =>
        eb
          .selectFrom('devices')
          // Named as the column, so it comes back as a Date: in RETURNING it is the heartbeat before this one.
          .select(['id', 'battery_level as old_level', 'last_heartbeat_at'])
          .where('id', '=', deviceId)
          .forUpdate()
          .as('o'),
      )
      .set({
        last_heartbeat_at: sql<Date>`now()`,
        last_seen_at: sql<Date>`now()`,
        battery_level: sql<number | null>`COALESCE(${input.batteryLevel ?? null}::smallint, d.battery_level)`,
        is_charging: sql<boolean | null>`COALESCE(${input.isCharging ?? null}::boolean, d.is_charging)`,
        network: sql<string | null>`COALESCE(${input.network ?? null}::varchar, d.network)`,
        app_version: sql<string | null>`COALESCE(${input.appVersion ?? null}::varchar, d.app_version)`,
        updated_at: sql<Date>`now()`,
      })
      .whereRef('d.id', '=', 'o.id')
      .where('d.status', '=', 'active')
      .returning(['d.id', 'd.brand_id', 'd.uuid', 'd.name', 'd.mode', 'd.battery_level', 'd.is_charging', 'o.old_level', 'o.last_heartbeat_at'])
      .executeTakeFirst();
    // Revoked between authentication and here: answer as authentication would have.
    if (!row) throw new AppError('UNAUTHORIZED');
    await raiseBatteryAlert(tx, row);
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
  const rows = await em
    .updateTable('devices')
    .set({
      status: 'revoked',
      revoked_at: sql<Date>`COALESCE(revoked_at, now())`,
      revoked_reason: sql<string>`COALESCE(revoked_reason, ${reason.slice(0, 64)}::varchar)`,
      refresh_jti: null,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', deviceId)
    .where('brand_id', '=', brandId)
    .returning('id')
    .execute();
  if (rows.length === 0) throw new AppError('DEVICE_NOT_FOUND');
}
