import type { Mode, PresenceChangeStatus } from '../../../contract/vocabulary.ts';
import { sql } from 'kysely';
import { transaction, type Db } from '../db.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { getSetting } from '../settings/service.ts';
import { requestBackfill } from '../recovery/backfill.ts';
import { raiseAlert } from '../alerts/raise.ts';

/** Devices moved per transaction; a large fleet is handled over several. */
const PRESENCE_BATCH = 200;

interface TransitionRow {
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
  /** Coming back online only: when it was marked offline. */
  was_offline_since?: Date | null;
}

const RETURNING = ['d.id', 'd.uuid', 'd.brand_id', 'd.mode', 'd.name', 'd.last_seen_at', 'd.last_heartbeat_at', 'd.battery_level', 'd.is_charging', 'd.network'] as const;

/** Presence history is kept this long; the presence sweep prunes older rows. */
export const PRESENCE_HISTORY_DAYS = 30;

/** The transitions of one batch in the device's presence history, in the transaction that made them. */
async function recordPresenceChanges(tx: Db, rows: TransitionRow[], status: PresenceChangeStatus): Promise<void> {
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

/** Presence history older than the retention. */
export async function prunePresenceHistory(em: Db, days = PRESENCE_HISTORY_DAYS): Promise<number> {
  const res = await em
    .deleteFrom('device_presence_changes')
    .where('changed_at', '<', sql<Date>`now() - make_interval(days => ${days})`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

function eventData(row: TransitionRow, status: PresenceChangeStatus) {
  return {
    device_uuid: row.uuid,
    name: row.name,
    status,
    last_seen_at: row.last_seen_at?.toISOString() ?? null,
    last_heartbeat_at: row.last_heartbeat_at?.toISOString() ?? null,
  };
}

/** One alert per offline episode: the episode is named by the moment the device went offline. */
async function raiseOfflineAlert(tx: Db, row: TransitionRow): Promise<void> {
  const since = row.offline_since?.toISOString() ?? 'unknown';
  await raiseAlert(tx, {
    brandId: Number(row.brand_id),
    type: 'device_offline',
    dedupeKey: `device:${row.id}:offline:${since}`,
    subject: `Device "${row.name}" is offline`,
    details: { device_uuid: row.uuid, device_name: row.name, mode: row.mode, offline_since: since, last_seen_at: row.last_seen_at?.toISOString() ?? null },
  });
}

/**
 * One pass of the offline detector. A device silent (no authenticated call) for
 * longer than `device_offline_minutes` goes offline and its brand gets one
 * `device.offline`; an offline device heard from again within the threshold
 * comes back online with one `device.online`. Each flip is a conditional UPDATE
 * on the recorded `online` flag (rows locked with SKIP LOCKED), written in the
 * same transaction as its event and its row in the presence history
 * (device_presence_changes): concurrent or repeated runs raise each event and
 * record each change exactly once per transition.
 */
export async function detectOfflineDevices(em: Db): Promise<{ wentOffline: number; cameOnline: number }> {
  const minutes = await getSetting(em, 'device_offline_minutes');
  const flip = async (move: (tx: Db) => Promise<TransitionRow[]>, status: PresenceChangeStatus): Promise<number> => {
    let total = 0;
    for (;;) {
      const moved = await transaction(em, async (tx) => {
        const rows = await move(tx);
        await recordPresenceChanges(tx, rows, status);
        for (const row of rows) {
          await recordEvent(tx, { brandId: row.brand_id, mode: row.mode, event: status === 'offline' ? 'device.offline' : 'device.online', data: eventData(row, status) });
          // Back online: whatever arrived while it was silent may never have been forwarded (docs/recovery.md).
          if (status === 'online' && row.was_offline_since) {
            const silentFrom = new Date(row.was_offline_since.getTime() - minutes * 60_000);
            await requestBackfill(tx, { deviceId: row.id, from: silentFrom, to: new Date(), reason: 'offline' });
          }
          if (status === 'offline') await raiseOfflineAlert(tx, row);
        }
        return rows.length;
      });
      total += moved;
      if (moved < PRESENCE_BATCH) return total;
    }
  };
  const silentFor = sql<Date>`now() - make_interval(mins => ${minutes})`;
  const wentOffline = await flip(
    (tx) =>
      tx
        .with('due', (qb) =>
          qb
            .selectFrom('devices')
            .select('id')
            .where('status', '=', 'active')
            .where('online', '=', true)
            .where(sql<Date>`COALESCE(last_seen_at, paired_at)`, '<', silentFor)
            .orderBy('id')
            .limit(PRESENCE_BATCH)
            .forUpdate()
            .skipLocked(),
        )
        .updateTable('devices as d')
        .from('due')
        .set({ online: false, offline_since: sql<Date>`now()`, updated_at: sql<Date>`now()` })
        .whereRef('d.id', '=', 'due.id')
        .where('d.online', '=', true)
        .returning([...RETURNING, 'd.offline_since'])
        .execute(),
    'offline',
  );
  const cameOnline = await flip(
    async (tx) => {
      const rows = await tx
        .with('back', (qb) =>
          qb
            .selectFrom('devices')
            .select(['id', 'offline_since'])
            .where('status', '=', 'active')
            .where('online', '=', false)
            .where('last_seen_at', '>=', silentFor)
            .orderBy('id')
            .limit(PRESENCE_BATCH)
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
    },
    'online',
  );
  return { wentOffline, cameOnline };
}

/** Rotated refresh tokens past their own expiry can no longer be presented; their record can go. */
export async function pruneRotatedRefreshTokens(em: Db): Promise<number> {
  const rows = await em.deleteFrom('device_refresh_token_rotations').where('expires_at', '<', sql<Date>`now()`).returning('jti').execute();
  return rows.length;
}
