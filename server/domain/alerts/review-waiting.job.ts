import type { AppDeps } from '../../deps.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { scheduledSweep } from '../../infra/jobs/scheduled.ts';
import { getSetting } from '../settings/service.ts';
import { raiseAlert } from './raise.ts';

const REVIEW_WAITING_QUEUE = 'alert-review-waiting-sweep';

/**
 * Payments a person must verify that have waited longer than
 * `review_waiting_minutes`, one alert per brand and mode summing them up. The
 * episode is named by the oldest waiting payment: the alert repeats only once
 * that one has been dealt with and another has waited too long, so a standing
 * queue does not mail the operators every minute.
 */
export async function sweepReviewWaiting(em: EntityManager): Promise<number> {
  return em.transactional(async (tx) => {
    const minutes = await getSetting(tx, 'review_waiting_minutes');
    const rows = await tx.execute<Array<{ brand_id: string; mode: string; waiting: string; oldest_id: string; oldest_since: Date }>>(
      `SELECT brand_id, mode, count(*) AS waiting,
              (array_agg(id ORDER BY updated_at, id))[1] AS oldest_id, min(updated_at) AS oldest_since
         FROM transactions
        WHERE status = 'awaiting_verification' AND updated_at < now() - make_interval(mins => ?)
        GROUP BY brand_id, mode`,
      [minutes],
    );
    let raised = 0;
    for (const r of rows) {
      const result = await raiseAlert(tx, {
        brandId: Number(r.brand_id),
        type: 'review_waiting',
        dedupeKey: `review:${r.mode}:oldest:${r.oldest_id}`,
        subject: `${r.waiting} payment(s) waiting for review longer than ${minutes} minutes`,
        details: { mode: r.mode, waiting: Number(r.waiting), oldest_waiting_since: new Date(r.oldest_since).toISOString(), threshold_minutes: minutes },
      });
      if (result.raised) raised++;
    }
    return raised;
  });
}

export function reviewWaitingRegistration(): JobRegistration {
  return scheduledSweep(REVIEW_WAITING_QUEUE, { cron: '* * * * *', run: (deps: AppDeps) => sweepReviewWaiting(deps.orm.em.fork()) });
}
