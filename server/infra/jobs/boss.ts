import { PgBoss } from 'pg-boss';
import type { EntityManager } from '../database/orm.ts';
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

/**
 * A pg-boss database adapter that runs its SQL on the caller's open
 * transaction, so a job is enqueued atomically with the state change that
 * causes it (both commit or neither). MikroORM's `em.execute` on a
 * transactional fork uses that fork's transaction connection.
 */
export function jobDb(em: EntityManager) {
  return {
    async executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }> {
      const rows = await em.execute(text, (values ?? []) as any[]);
      return { rows: Array.isArray(rows) ? rows : [] };
    },
  };
}
