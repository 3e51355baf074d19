import type { PresenceChangeStatus } from '../../../contract/vocabulary.ts';
import { transaction, type Db } from '../db.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { getSetting } from '../settings/service.ts';
import { requestBackfill } from '../recovery/backfill.ts';
import { raiseAlert } from '../alerts/raise.ts';
import {
  deleteExpiredRotations,
  deletePresenceChangesOlderThan,
  insertPresenceChanges,
  markSeenOnline,
  markSilentOffline,
  type TransitionRow,
} from './queries/presence.ts';

/** Devices moved per transaction; a large fleet is handled over several. */
const PRESENCE_BATCH = 200;

/** Presence history is kept this long; the presence sweep prunes older rows. */
export const PRESENCE_HISTORY_DAYS = 30;

/** Presence history older than the retention. */
export async function prunePresenceHistory(em: Db, days = PRESENCE_HISTORY_DAYS): Promise<number> {
  return deletePresenceChangesOlderThan(em, days);
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
        await insertPresenceChanges(tx, rows, status);
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
  const wentOffline = await flip((tx) => markSilentOffline(tx, minutes, PRESENCE_BATCH), 'offline');
  const cameOnline = await flip((tx) => markSeenOnline(tx, minutes, PRESENCE_BATCH), 'online');
  return { wentOffline, cameOnline };
}

/** Rotated refresh tokens past their own expiry can no longer be presented; their record can go. */
export async function pruneRotatedRefreshTokens(em: Db): Promise<number> {
  return deleteExpiredRotations(em);
}
