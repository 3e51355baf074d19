import type { PgBoss, Queue } from 'pg-boss';
import { z } from 'zod';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from './workers.ts';

/**
 * A periodic sweep: pg-boss's scheduler sends one job per cron tick across every
 * process sharing the database, and the `exclusive` queue drops a tick that finds
 * the previous run still going, so a sweep never runs twice at once. `notify`
 * wakes a worker at once when a run is sent by hand (CLI, tests).
 */
export function scheduledSweep<D>(
  name: string,
  opts: { cron: string; pollingIntervalSeconds?: number; run: (deps: D, data: unknown) => Promise<unknown> },
): JobRegistration<D & Pick<AppDeps, 'boss'>> {
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
      // The job's data: none from the scheduler, what the sender gave for a run sent by hand.
      await deps.boss.work(name, { pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 15 }, async ([job]) => {
        await opts.run(deps, job?.data ?? {});
      });
      await deps.boss.schedule(name, opts.cron);
      return { stop: () => deps.boss.offWork(name, { wait: true }) };
    },
  };
}

/**
 * A sweep that runs every minute: its name (in logs, and to run it on demand)
 * and its work, given what it declares it touches (`D`, a `Pick` of AppDeps).
 */
export interface MinuteSweep<D = AppDeps> {
  name: string;
  run: (deps: D) => Promise<unknown>;
}

export const MINUTE_SWEEPS_QUEUE = 'minute-sweeps';

const minuteSweepsPayload = z.object({ only: z.array(z.string()).min(1).optional() }).strict();

/**
 * The sweeps that run every minute, as one scheduled job that runs them one
 * after another. With a schedule each, they all fired at the same cron pass
 * (pg-boss sends every schedule due in a pass together), each job sent,
 * fetched and completed on its own and the six sweeps' statements running at
 * once: in the benchmark of merchant reads at a steady 300/s that burst, about
 * twenty job-queue statements and fifteen of the sweeps' within 300 ms, was the
 * largest stretch of slow requests in our rounds. One job sends a third of the
 * job-queue statements, and its sweeps send one statement at a time.
 *
 * A sweep that fails is logged and the ones after it still run; the job then
 * fails naming it, and the next minute runs them all again. On demand (tests,
 * an operator): send the queue `{ only: [names] }` (runMinuteSweepsNow).
 */
export function minuteSweeps<D>(sweeps: ReadonlyArray<MinuteSweep<D>>): JobRegistration<D & Pick<AppDeps, 'boss' | 'logger'>> {
  const byName = new Map(sweeps.map((s) => [s.name, s]));
  const scheduled = scheduledSweep(MINUTE_SWEEPS_QUEUE, {
    cron: '* * * * *',
    async run(deps: D & Pick<AppDeps, 'logger'>, data) {
      const payload = minuteSweepsPayload.safeParse(data);
      if (!payload.success) throw new Error(`minute sweeps: bad payload (${payload.error.issues.map((i) => i.message).join('; ')})`);
      const only = payload.data.only;
      const unknown = (only ?? []).filter((n) => !byName.has(n));
      if (unknown.length) throw new Error(`minute sweeps: no sweep named ${unknown.join(', ')}`);
      const failed: string[] = [];
      for (const s of only ? sweeps.filter((s) => only.includes(s.name)) : sweeps) {
        try {
          await s.run(deps);
        } catch (err) {
          failed.push(s.name);
          deps.logger.error({ sweep: s.name, err: { message: err instanceof Error ? err.message : String(err) } }, 'minute sweep failed');
        }
      }
      if (failed.length) throw new Error(`minute sweeps failed: ${failed.join(', ')}`);
    },
  });
  return {
    queue: scheduled.queue,
    async start(deps) {
      // Each of these sweeps used to have a schedule and a queue of its own: a database that still holds
      // them would go on sending their jobs every minute to queues nothing works. Read once (two statements
      // per start), removed only where present.
      const names = new Set(byName.keys());
      for (const s of await deps.boss.getSchedules()) if (names.has(s.name)) await deps.boss.unschedule(s.name, s.key);
      for (const q of await deps.boss.getQueues([...names])) await deps.boss.deleteQueue(q.name);
      return scheduled.start!(deps);
    },
  };
}

/**
 * Runs the named minute sweeps now, through the job queue, in whichever process
 * works it. Its own singleton key keeps the send from being dropped when the
 * scheduled run is queued or running (the queue is `exclusive`); a process
 * works one job of the queue at a time, so the two still run one after the other there.
 */
export async function runMinuteSweepsNow(boss: PgBoss, only: readonly string[]): Promise<string> {
  const id = await boss.send(MINUTE_SWEEPS_QUEUE, { only: [...only] }, { singletonKey: `only:${[...only].sort().join(',')}` });
  if (!id) throw new Error(`a run of ${only.join(', ')} is already queued`);
  return id;
}
