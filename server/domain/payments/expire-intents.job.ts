import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { scheduledSweep } from '../../infra/jobs/scheduled.ts';
import { expireDueIntents } from './intents.ts';

export const EXPIRE_INTENTS_QUEUE = 'payment-intents-expiry';

/** Batch size per database transaction, and the most one run handles (the next run takes the rest). */
const BATCH = 200;
const MAX_PER_RUN = 10_000;

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

export function expireIntentsRegistration(): JobRegistration {
  return scheduledSweep(EXPIRE_INTENTS_QUEUE, { cron: '* * * * *', run: runIntentExpirySweep });
}
