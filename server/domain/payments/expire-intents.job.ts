import type { Queue } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { expireDueIntents } from './intents.ts';

export const EXPIRE_INTENTS_QUEUE = 'payment-intents-expiry';

/** Batch size per database transaction, and the most one run handles (the next run takes the rest). */
const BATCH = 200;
const MAX_PER_RUN = 10_000;

/** One sweep at a time service-wide; a run that finds one still going is dropped. */
export const expireIntentsQueue: Queue = {
  name: EXPIRE_INTENTS_QUEUE,
  policy: 'exclusive',
  retryLimit: 0,
  expireInSeconds: 300,
  deleteAfterSeconds: 24 * 60 * 60,
  notify: true,
};

/**
 * Moves intents past `expires_at` (and their open transactions) to `expired`,
 * each batch in its own database transaction with its `payment.expired` events.
 */
export async function runIntentExpirySweep(deps: Pick<AppDeps, 'orm' | 'logger'>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await expireDueIntents(deps.orm.em.fork(), { limit: BATCH });
    total += n;
    if (n < BATCH || total >= MAX_PER_RUN) break;
  }
  if (total) deps.logger.info({ expired_intents: total }, 'payment intent expiry sweep');
  return total;
}

async function start(deps: AppDeps): Promise<{ stop(): Promise<void> }> {
  await deps.boss.work(EXPIRE_INTENTS_QUEUE, { pollingIntervalSeconds: 15 }, async () => {
    await runIntentExpirySweep(deps);
  });
  // pg-boss's scheduler fires each minute once across every process sharing the database.
  await deps.boss.schedule(EXPIRE_INTENTS_QUEUE, '* * * * *');
  return { stop: () => deps.boss.offWork(EXPIRE_INTENTS_QUEUE, { wait: true }) };
}

export function expireIntentsRegistration(): JobRegistration {
  return { queue: expireIntentsQueue, start };
}
