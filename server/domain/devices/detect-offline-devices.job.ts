import type { Queue } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { detectOfflineDevices, pruneRotatedRefreshTokens } from './presence.ts';

export const DETECT_OFFLINE_QUEUE = 'device-presence-sweep';

/** One sweep at a time service-wide; a run that finds one still going is dropped. */
export const detectOfflineQueue: Queue = {
  name: DETECT_OFFLINE_QUEUE,
  policy: 'exclusive',
  retryLimit: 0,
  expireInSeconds: 300,
  deleteAfterSeconds: 24 * 60 * 60,
  // Woken at once by NOTIFY when a run is sent by hand (CLI, tests), not only by the next poll.
  notify: true,
};

/** The job: no payload; the device rows say everything. */
export async function runPresenceSweep(deps: Pick<AppDeps, 'orm' | 'logger'>): Promise<void> {
  const { wentOffline, cameOnline } = await detectOfflineDevices(deps.orm.em.fork());
  const pruned = await pruneRotatedRefreshTokens(deps.orm.em.fork());
  if (wentOffline || cameOnline || pruned) deps.logger.info({ went_offline: wentOffline, came_online: cameOnline, pruned_refresh_records: pruned }, 'device presence sweep');
}

async function start(deps: AppDeps): Promise<{ stop(): Promise<void> }> {
  await deps.boss.work(DETECT_OFFLINE_QUEUE, { pollingIntervalSeconds: 15 }, async () => {
    await runPresenceSweep(deps);
  });
  // pg-boss's scheduler fires each minute once across every process sharing the database.
  await deps.boss.schedule(DETECT_OFFLINE_QUEUE, '* * * * *');
  return { stop: () => deps.boss.offWork(DETECT_OFFLINE_QUEUE, { wait: true }) };
}

export function detectOfflineDevicesRegistration(): JobRegistration {
  return { queue: detectOfflineQueue, start };
}
