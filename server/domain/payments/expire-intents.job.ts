import type { AppDeps } from '../../deps.ts';
import type { MinuteSweep } from '../../infra/jobs/scheduled.ts';
import { expireDueIntents } from './intents.ts';

export const EXPIRE_INTENTS_SWEEP = 'payment-intents-expiry';

/** Batch size per database transaction, and the most one run handles (the next run takes the rest). */
const BATCH = 200;
const MAX_PER_RUN = 10_000;

/**
 * Moves intents past `expires_at` (and their open transactions) to `expired`,
 * each batch in its own database transaction with its `payment.expired` events.
 */
export async function runIntentExpirySweep(deps: Pick<AppDeps, 'db' | 'logger'>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await expireDueIntents(deps.db, { limit: BATCH });
    total += n;
    if (n < BATCH || total >= MAX_PER_RUN) break;
  }
  if (total) deps.logger.info({ expired_intents: total }, 'payment intent expiry sweep');
  return total;
}

/** Runs every minute with the other minute sweeps (infra/jobs/scheduled.ts). */
export const intentExpirySweep: MinuteSweep<Pick<AppDeps, 'db' | 'logger'>> = { name: EXPIRE_INTENTS_SWEEP, run: runIntentExpirySweep };
