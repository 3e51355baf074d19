import type { Queue } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { purgeExpiredKeys } from './service.ts';

export const PURGE_IDEMPOTENCY_KEYS_QUEUE = 'idempotency-keys-purge';

export const purgeIdempotencyKeysQueue: Queue = {
  name: PURGE_IDEMPOTENCY_KEYS_QUEUE,
  policy: 'exclusive',
  retryLimit: 0,
  expireInSeconds: 300,
  deleteAfterSeconds: 24 * 60 * 60,
  notify: true,
};

/**
 * Deletes keys past their 24 h retention in bounded batches. Correctness does not
 * depend on it (an expired key is treated as unused anyway); it keeps the table small.
 */
export async function runIdempotencyKeyPurge(deps: Pick<AppDeps, 'orm' | 'logger'>): Promise<number> {
  let total = 0;
  for (let i = 0; i < 20; i++) {
    const n = await purgeExpiredKeys(deps.orm.em.fork(), { limit: 1000 });
    total += n;
    if (n < 1000) break;
  }
  if (total) deps.logger.info({ purged_idempotency_keys: total }, 'idempotency key purge');
  return total;
}

async function start(deps: AppDeps): Promise<{ stop(): Promise<void> }> {
  await deps.boss.work(PURGE_IDEMPOTENCY_KEYS_QUEUE, { pollingIntervalSeconds: 60 }, async () => {
    await runIdempotencyKeyPurge(deps);
  });
  await deps.boss.schedule(PURGE_IDEMPOTENCY_KEYS_QUEUE, '17 * * * *');
  return { stop: () => deps.boss.offWork(PURGE_IDEMPOTENCY_KEYS_QUEUE, { wait: true }) };
}

export function purgeIdempotencyKeysRegistration(): JobRegistration {
  return { queue: purgeIdempotencyKeysQueue, start };
}
