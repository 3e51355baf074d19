import { PgBoss } from 'pg-boss';
import type { Logger } from '../logger.ts';

export { PgBoss };

/** pg-boss on the service's own database, in its own schema. */
export async function startBoss(opts: { url: string; logger: Logger; max?: number }): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: opts.url,
    schema: 'pgboss',
    max: opts.max ?? 4,
    // LISTEN/NOTIFY wakes workers the moment a job is sent instead of after a
    // poll interval; polling stays on as the correctness floor.
    useListenNotify: true,
  });
  boss.on('error', (err: Error) => opts.logger.error({ err: { message: err.message } }, 'job queue error'));
  await boss.start();
  return boss;
}
