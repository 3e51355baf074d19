import type { Queue } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from './workers.ts';

/**
 * A periodic sweep: pg-boss's scheduler sends one job per cron tick across every
 * process sharing the database, and the `exclusive` queue drops a tick that finds
 * the previous run still going, so a sweep never runs twice at once. `notify`
 * wakes a worker at once when a run is sent by hand (CLI, tests).
 */
export function scheduledSweep(
  name: string,
  opts: { cron: string; pollingIntervalSeconds?: number; run(deps: AppDeps): Promise<unknown> },
): JobRegistration {
  const queue: Queue = {
    name,
    policy: 'exclusive',
    retryLimit: 0,
    expireInSeconds: 300,
    deleteAfterSeconds: 24 * 60 * 60,
    notify: true,
  };
  return {
    queue,
    async start(deps) {
      await deps.boss.work(name, { pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 15 }, async () => {
        await opts.run(deps);
      });
      await deps.boss.schedule(name, opts.cron);
      return { stop: () => deps.boss.offWork(name, { wait: true }) };
    },
  };
}
