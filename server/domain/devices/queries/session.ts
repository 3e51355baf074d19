import { sql } from 'kysely';
import { prepared, type Db } from '../../db.ts';

// The statements of a paired device's session: authentication, heartbeat, clock, token refresh, revocation.

/**
 * `last_seen_at` is refreshed at most this often: presence is minutes-grained
 * (the offline threshold defaults to an hour), and skipping the write keeps an
 * authenticated call at one cheap statement.
 */
const LAST_SEEN_RESOLUTION_SECONDS = 60;

/**
 * An active device of an active brand by its uuid, refreshing a stale
 * `last_seen_at` in the same statement (a data-modifying CTE), compiled once:
 * every device request runs it.
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

export async function selectActiveDeviceAndTouch(db: Db, uuid: string) {
  return deviceByUuid.executeTakeFirst(db, { uuid });
}

/**
 * Stores a heartbeat on an active device (the given fields; absent ones keep
 * theirs), locking the row and returning, with the new state, the battery level
 * and heartbeat time it replaced. Undefined when the device is not active.
 */
export async function storeHeartbeat(
  tx: Db,
  deviceId: number,
  input: {
    batteryLevel: number | null; isCharging: boolean | null; network: string | null; appVersion: string | null;
    smsPermission: boolean | null; batteryOptimizationIgnored: boolean | null; lastSmsSeenAt: Date | null;
  },
) {
  return tx
    .updateTable('devices as d')
    .from((eb) =>
      eb
        .selectFrom('devices')
        // Named as the column, so it comes back as a Date: in RETURNING it is the heartbeat before this one.
        .select(['id', 'battery_level as old_level', 'last_heartbeat_at', 'sms_permission as old_sms_permission'])
        .where('id', '=', deviceId)
        .forUpdate()
        .as('o'),
    )
    .set({
      last_heartbeat_at: sql<Date>`now()`,
      last_seen_at: sql<Date>`now()`,
      battery_level: sql<number | null>`COALESCE(${input.batteryLevel}::smallint, d.battery_level)`,
      is_charging: sql<boolean | null>`COALESCE(${input.isCharging}::boolean, d.is_charging)`,
      network: sql<string | null>`COALESCE(${input.network}::varchar, d.network)`,
      app_version: sql<string | null>`COALESCE(${input.appVersion}::varchar, d.app_version)`,
      sms_permission: sql<boolean | null>`COALESCE(${input.smsPermission}::boolean, d.sms_permission)`,
      battery_optimization_ignored: sql<boolean | null>`COALESCE(${input.batteryOptimizationIgnored}::boolean, d.battery_optimization_ignored)`,
      last_sms_seen_at: sql<Date | null>`COALESCE(${input.lastSmsSeenAt}::timestamptz, d.last_sms_seen_at)`,
      updated_at: sql<Date>`now()`,
    })
    .whereRef('d.id', '=', 'o.id')
    .where('d.status', '=', 'active')
    .returning([
      'd.id', 'd.brand_id', 'd.uuid', 'd.name', 'd.mode', 'd.battery_level', 'd.is_charging', 'd.sms_permission', 'd.battery_optimization_ignored', 'o.old_level',
      'o.last_heartbeat_at', 'o.old_sms_permission',
    ])
    .executeTakeFirst();
}

/** Revokes the brand's device (a revoked one keeps its first time and reason); false when there is no such device. */
export async function revokeBrandDevice(db: Db, brandId: number, deviceId: number, reason: string): Promise<boolean> {
  const rows = await db
    .updateTable('devices')
    .set({
      status: 'revoked',
      revoked_at: sql<Date>`COALESCE(revoked_at, now())`,
      revoked_reason: sql<string>`COALESCE(revoked_reason, ${reason}::varchar)`,
      refresh_jti: null,
      aes_key_encrypted: null,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', deviceId)
    .where('brand_id', '=', brandId)
    .returning('id')
    .execute();
  return rows.length > 0;
}

/** Clock smoothing: how far each sample moves the stored offset, and the jump that replaces it outright. */
export const CLOCK_SMOOTHING = 0.3;
export const CLOCK_JUMP_MS = 10 * 60_000;

const storeClockSample = prepared((k, $: { deviceId: number; sample: number }) =>
  k
    .updateTable('devices')
    .set({
      // Raw: the smoothing reads the stored offset in the same statement (no read-modify-write race).
      clock_offset_ms: sql<number>`CASE
          WHEN clock_offset_ms IS NULL OR abs(${$.sample}::integer - clock_offset_ms) > ${CLOCK_JUMP_MS}::integer THEN ${$.sample}::integer
          ELSE round(clock_offset_ms + ${CLOCK_SMOOTHING}::numeric * (${$.sample}::integer - clock_offset_ms))::integer END`,
      clock_offset_at: sql<Date>`now()`,
    })
    .where('id', '=', $.deviceId)
    .returning('clock_offset_ms'),
);

/** Folds a clock sample into the device's offset; the new offset, undefined for an unknown device. */
export async function storeClockOffset(db: Db, deviceId: number, sample: number): Promise<number | null | undefined> {
  return (await storeClockSample.executeTakeFirst(db, { deviceId, sample }))?.clock_offset_ms;
}

/** The device of a refresh token, locked, with its brand's status. */
export async function lockDeviceForRefresh(tx: Db, deviceUuid: string) {
  return tx
    .selectFrom('devices as d')
    .innerJoin('brands as b', 'b.id', 'd.brand_id')
    .select(['d.id', 'd.status', 'd.fingerprint_hash', 'd.refresh_jti', 'b.status as brand_status'])
    .where('d.uuid', '=', deviceUuid)
    .forUpdate('d')
    .executeTakeFirst();
}

/** Whether this refresh token id was already rotated away on the device. */
export async function wasRotated(db: Db, deviceId: number, jti: string): Promise<boolean> {
  const rotated = await db.selectFrom('device_refresh_token_rotations').select('jti').where('jti', '=', jti).where('device_id', '=', deviceId).execute();
  return rotated.length > 0;
}

export async function revokeForTokenReuse(tx: Db, deviceId: number): Promise<void> {
  await tx
    .updateTable('devices')
    .set({ status: 'revoked', revoked_at: sql<Date>`now()`, revoked_reason: 'refresh_token_reuse', refresh_jti: null, aes_key_encrypted: null, updated_at: sql<Date>`now()` })
    .where('id', '=', deviceId)
    .execute();
}

/** Records the old refresh token as rotated and makes `nextJti` the device's current one. */
export async function rotateRefreshToken(tx: Db, deviceId: number, old: { jti: string; expiresAt: Date }, nextJti: string): Promise<void> {
  await tx.insertInto('device_refresh_token_rotations').values({ jti: old.jti, device_id: deviceId, expires_at: old.expiresAt }).execute();
  await tx.updateTable('devices').set({ refresh_jti: nextJti, last_seen_at: sql<Date>`now()`, updated_at: sql<Date>`now()` }).where('id', '=', deviceId).execute();
}
