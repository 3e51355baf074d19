import { PgBoss } from 'pg-boss';
import type { Logger } from '../logger.ts';

export { PgBoss };

/**
 * pg-boss on the service's own database, in its own schema. `background: false`
 * (a process that only sends jobs: the API role, the CLI) leaves out what pg-boss
 * otherwise runs in every started instance: its maintenance (supervise), the
 * clock that turns schedules into jobs, and a LISTEN connection for wake-ups. Both claim their turn in the database, so
 * any number of workers share them; a process that works no job has no use for them.
 */
export async function startBoss(opts: { url: string; logger: Logger; max?: number; background?: boolean }): Promise<PgBoss> {
  const background = opts.background ?? true;
  const boss = new PgBoss({
    connectionString: opts.url,
    schema: 'pgboss',
    max: opts.max ?? 4,
    supervise: background,
    schedule: background,
    // LISTEN/NOTIFY wakes workers the moment a job is sent instead of after a
    // poll interval; polling stays on as the correctness floor. A process that
    // works no job needs no listening connection (sending still notifies).
    useListenNotify: background,
  });
  boss.on('error', (err: Error) => opts.logger.error({ err: { message: err.message } }, 'job queue error'));
  await boss.start();
  return boss;
}
