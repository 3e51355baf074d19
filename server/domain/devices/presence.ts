import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { getSetting } from '../settings/service.ts';
import { requestBackfill } from '../recovery/backfill.ts';
import { raiseAlert } from '../alerts/raise.ts';

/** Devices moved per transaction; a large fleet is handled over several. */
const PRESENCE_BATCH = 200;

interface TransitionRow {
  id: string;
  uuid: string;
  brand_id: string;
  mode: Mode;
  name: string;
  last_seen_at: Date | null;
  last_heartbeat_at: Date | null;
  offline_since: Date | null;
  /** Coming back online only: when it was marked offline. */
  was_offline_since?: Date | null;
}

const RETURNING = 'RETURNING d.id, d.uuid, d.brand_id, d.mode, d.name, d.last_seen_at, d.last_heartbeat_at, d.offline_since';

function eventData(row: TransitionRow, status: 'offline' | 'online') {
  return {
    device_uuid: row.uuid,
    name: row.name,
    status,
    last_seen_at: row.last_seen_at ? new Date(row.last_seen_at).toISOString() : null,
    last_heartbeat_at: row.last_heartbeat_at ? new Date(row.last_heartbeat_at).toISOString() : null,
  };
}

/** One alert per offline episode: the episode is named by the moment the device went offline. */
async function raiseOfflineAlert(tx: EntityManager, row: TransitionRow): Promise<void> {
  const since = row.offline_since ? new Date(row.offline_since).toISOString() : 'unknown';
  await raiseAlert(tx, {
    brandId: Number(row.brand_id),
    type: 'device_offline',
    dedupeKey: `device:${row.id}:offline:${since}`,
    subject: `Device "${row.name}" is offline`,
    details: { device_uuid: row.uuid, device_name: row.name, mode: row.mode, offline_since: since, last_seen_at: row.last_seen_at ? new Date(row.last_seen_at).toISOString() : null },
  });
}

/**
 * One pass of the offline detector. A device silent (no authenticated call) for
 * longer than `device_offline_minutes` goes offline and its brand gets one
 * `device.offline`; an offline device heard from again within the threshold
 * comes back online with one `device.online`. Each flip is a conditional UPDATE
 * on the recorded `online` flag (rows locked with SKIP LOCKED), written in the
 * same transaction as its event: concurrent or repeated runs raise each event
 * exactly once per transition.
 */
export async function detectOfflineDevices(em: EntityManager): Promise<{ wentOffline: number; cameOnline: number }> {
  const minutes = await getSetting(em, 'device_offline_minutes');
  const flip = async (sql: string, status: 'offline' | 'online'): Promise<number> => {
    let total = 0;
    for (;;) {
      const moved = await em.fork().transactional(async (tx) => {
        const rows = await tx.execute<TransitionRow[]>(sql, [minutes, PRESENCE_BATCH]);
        for (const row of rows) {
          await recordEvent(tx, { brandId: Number(row.brand_id), mode: row.mode, event: status === 'offline' ? 'device.offline' : 'device.online', data: eventData(row, status) });
          // Back online: whatever arrived while it was silent may never have been forwarded (docs/recovery.md).
          if (status === 'online' && row.was_offline_since) {
            const silentFrom = new Date(new Date(row.was_offline_since).getTime() - minutes * 60_000);
            await requestBackfill(tx, { deviceId: Number(row.id), from: silentFrom, to: new Date(), reason: 'offline' });
          }
          if (status === 'offline') await raiseOfflineAlert(tx, row);
        }
        return rows.length;
      });
      total += moved;
      if (moved < PRESENCE_BATCH) return total;
    }
  };
  const wentOffline = await flip(
    `WITH due AS (
       SELECT id FROM devices
        WHERE status = 'active' AND online
          AND COALESCE(last_seen_at, paired_at) < now() - make_interval(mins => ?)
        ORDER BY id LIMIT ?
        FOR UPDATE SKIP LOCKED
     )
     UPDATE devices d SET online = false, offline_since = now(), updated_at = now()
       FROM due WHERE d.id = due.id AND d.online
     ${RETURNING}`,
    'offline',
  );
  const cameOnline = await flip(
    `WITH back AS (
       SELECT id, offline_since FROM devices
        WHERE status = 'active' AND NOT online
          AND last_seen_at >= now() - make_interval(mins => ?)
        ORDER BY id LIMIT ?
        FOR UPDATE SKIP LOCKED
     )
     UPDATE devices d SET online = true, offline_since = NULL, updated_at = now()
       FROM back WHERE d.id = back.id AND NOT d.online
     ${RETURNING}, back.offline_since AS was_offline_since`,
    'online',
  );
  return { wentOffline, cameOnline };
}

/** Rotated refresh tokens past their own expiry can no longer be presented; their record can go. */
export async function pruneRotatedRefreshTokens(em: EntityManager): Promise<number> {
  const rows = await em.execute('DELETE FROM device_refresh_token_rotations WHERE expires_at < now() RETURNING jti');
  return rows.length;
}
