import { sql } from 'kysely';
import type { Mode, PresenceChangeStatus } from '../../../../contract/vocabulary.ts';
import type { Db } from '../../db.ts';

// The statements of the presence sweep: devices going offline and coming back, their history, and pruning.

/** A device that changed presence, as the sweep reports it. */
export interface TransitionRow {
  id: number;
  uuid: string;
  brand_id: number;
  mode: Mode;
  name: string;
  last_seen_at: Date | null;
  last_heartbeat_at: Date | null;
  battery_level: number | null;
  is_charging: boolean | null;
  network: string | null;
  offline_since: Date | null;
  /** Coming back online: when it had gone offline. */
  was_offline_since?: Date | null;
}

const RETURNING = ['d.id', 'd.uuid', 'd.brand_id', 'd.mode', 'd.name', 'd.last_seen_at', 'd.last_heartbeat_at', 'd.battery_level', 'd.is_charging', 'd.network'] as const;

export async function insertPresenceChanges(tx: Db, rows: readonly TransitionRow[], status: PresenceChangeStatus): Promise<void> {
  if (rows.length === 0) return;
  await tx
    .insertInto('device_presence_changes')
    .values(
      rows.map((r) => ({
        device_id: r.id,
        status,
        last_seen_at: r.last_seen_at,
        last_heartbeat_at: r.last_heartbeat_at,
        battery_level: r.battery_level,
        is_charging: r.is_charging,
        network: r.network,
      })),
    )
    .execute();
}

export async function deletePresenceChangesOlderThan(db: Db, days: number): Promise<number> {
  const res = await db
    .deleteFrom('device_presence_changes')
    .where('changed_at', '<', sql<Date>`now() - make_interval(days => ${days})`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Up to `limit` online active devices silent for `minutes`, marked offline now (rows another sweep holds are skipped). */
export async function markSilentOffline(tx: Db, minutes: number, limit: number): Promise<TransitionRow[]> {
  return tx
    .with('due', (qb) =>
      qb
        .selectFrom('devices')
        .select('id')
        .where('status', '=', 'active')
        .where('online', '=', true)
        .where(sql<Date>`COALESCE(last_seen_at, paired_at)`, '<', sql<Date>`now() - make_interval(mins => ${minutes})`)
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .updateTable('devices as d')
    .from('due')
    .set({ online: false, offline_since: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .whereRef('d.id', '=', 'due.id')
    .where('d.online', '=', true)
    .returning([...RETURNING, 'd.offline_since'])
    .execute();
}

/** Up to `limit` offline active devices seen within `minutes`, marked online; `was_offline_since` is when each went offline. */
export async function markSeenOnline(tx: Db, minutes: number, limit: number): Promise<TransitionRow[]> {
  const rows = await tx
    .with('back', (qb) =>
      qb
        .selectFrom('devices')
        .select(['id', 'offline_since'])
        .where('status', '=', 'active')
        .where('online', '=', false)
        .where('last_seen_at', '>=', sql<Date>`now() - make_interval(mins => ${minutes})`)
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .updateTable('devices as d')
    .from('back')
    .set({ online: true, offline_since: null, updated_at: sql<Date>`now()` })
    .whereRef('d.id', '=', 'back.id')
    .where('d.online', '=', false)
    // The device's offline_since is now null; the one returned is the CTE's, when it went offline.
    .returning([...RETURNING, 'back.offline_since'])
    .execute();
  return rows.map((r) => ({ ...r, offline_since: null, was_offline_since: r.offline_since }));
}

export async function deleteExpiredRotations(db: Db): Promise<number> {
  const rows = await db.deleteFrom('device_refresh_token_rotations').where('expires_at', '<', sql<Date>`now()`).returning('jti').execute();
  return rows.length;
}
