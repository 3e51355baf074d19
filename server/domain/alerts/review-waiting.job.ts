import type { AppDeps } from '../../deps.ts';
import type { MinuteSweep } from '../../infra/jobs/scheduled.ts';
import { transaction, type Db } from '../db.ts';
import { getSetting } from '../settings/service.ts';
import { raiseAlert } from './raise.ts';
import { selectReviewWaiting } from './queries.ts';

export const REVIEW_WAITING_SWEEP = 'alert-review-waiting-sweep';

/**
 * Payments a person must verify that have waited longer than
 * `review_waiting_minutes`, one alert per brand and mode summing them up. The
 * episode is named by the oldest waiting payment: the alert repeats only once
 * that one has been dealt with and another has waited too long, so a standing
 * queue does not mail the operators every minute.
 */
export async function sweepReviewWaiting(em: Db): Promise<number> {
  return transaction(em, async (tx) => {
    const minutes = await getSetting(tx, 'review_waiting_minutes');
    const rows = await selectReviewWaiting(tx, minutes);
    let raised = 0;
    for (const r of rows) {
      const result = await raiseAlert(tx, {
        brandId: Number(r.brand_id),
        type: 'review_waiting',
        dedupeKey: `review:${r.mode}:oldest:${r.oldest_id}`,
        subject: `${r.waiting} payment(s) waiting for review longer than ${minutes} minutes`,
        details: { mode: r.mode, waiting: Number(r.waiting), oldest_waiting_since: r.updated_at.toISOString(), threshold_minutes: minutes },
      });
      if (result.raised) raised++;
    }
    return raised;
  });
}

/** Runs every minute with the other minute sweeps (infra/jobs/scheduled.ts). */
export const reviewWaitingSweep: MinuteSweep<Pick<AppDeps, 'db'>> = { name: REVIEW_WAITING_SWEEP, run: (deps) => sweepReviewWaiting(deps.db) };
