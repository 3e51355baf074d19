import type { AppDeps } from '../../deps.ts';
import type { MinuteSweep } from '../../infra/jobs/scheduled.ts';
import { detectOfflineDevices, prunePresenceHistory, pruneRotatedRefreshTokens } from './presence.ts';

export const DETECT_OFFLINE_SWEEP = 'device-presence-sweep';

/** The job: no payload; the device rows say everything. */
async function runPresenceSweep(deps: Pick<AppDeps, 'db' | 'logger'>): Promise<void> {
  const { wentOffline, cameOnline } = await detectOfflineDevices(deps.db);
  const pruned = await pruneRotatedRefreshTokens(deps.db);
  const prunedHistory = await prunePresenceHistory(deps.db);
  if (wentOffline || cameOnline || pruned || prunedHistory) {
    deps.logger.info({ went_offline: wentOffline, came_online: cameOnline, pruned_refresh_records: pruned, pruned_presence_history: prunedHistory }, 'device presence sweep');
  }
}

/** Runs every minute with the other minute sweeps (infra/jobs/scheduled.ts). */
export const presenceSweep: MinuteSweep<Pick<AppDeps, 'db' | 'logger'>> = { name: DETECT_OFFLINE_SWEEP, run: runPresenceSweep };
