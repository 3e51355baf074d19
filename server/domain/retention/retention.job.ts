import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { scheduledSweep } from '../../infra/jobs/scheduled.ts';
import { enforceRetention } from './retention.ts';

export const RETENTION_QUEUE = 'data-retention';

/**
 * Hourly: each run works off at most MAX_BATCHES batches per table, so a
 * backlog is spread over runs; between them the tables are not locked. The
 * sweep's queue is exclusive: two processes never run it at once.
 */
export function retentionRegistration(): JobRegistration<Pick<AppDeps, 'db' | 'logger' | 'config' | 'boss'>> {
  return scheduledSweep(RETENTION_QUEUE, { cron: '41 * * * *', pollingIntervalSeconds: 60, run: (deps: Pick<AppDeps, 'db' | 'logger' | 'config'>) => enforceRetention(deps) });
}
