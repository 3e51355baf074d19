import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { scheduledSweep } from '../../infra/jobs/scheduled.ts';
import { purgeExpiredKeys } from './service.ts';

export const PURGE_IDEMPOTENCY_KEYS_QUEUE = 'idempotency-keys-purge';

/**
 * Deletes keys past their 24 h retention in bounded batches. Correctness does not
 * depend on it (an expired key is treated as unused anyway); it keeps the table small.
 */
async function runIdempotencyKeyPurge(deps: Pick<AppDeps, 'db' | 'logger'>): Promise<number> {
  let total = 0;
  for (let i = 0; i < 20; i++) {
    const n = await purgeExpiredKeys(deps.db, { limit: 1000 });
    total += n;
    if (n < 1000) break;
  }
  if (total) deps.logger.info({ purged_idempotency_keys: total }, 'idempotency key purge');
  return total;
}

export function purgeIdempotencyKeysRegistration(): JobRegistration<Pick<AppDeps, 'db' | 'logger' | 'boss'>> {
  return scheduledSweep(PURGE_IDEMPOTENCY_KEYS_QUEUE, { cron: '17 * * * *', pollingIntervalSeconds: 60, run: runIdempotencyKeyPurge });
}
