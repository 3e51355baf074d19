import { sql } from 'kysely';
import type { AppDeps } from '../../deps.ts';
import type { MinuteSweep } from '../../infra/jobs/scheduled.ts';
import { transaction, type Db } from '../db.ts';
import { getSetting } from '../settings/service.ts';
import { raiseAlert } from './raise.ts';

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
    const rows = await tx
      .selectFrom('transactions')
      .select((eb) => [
        'brand_id',
        'mode',
        eb.fn.countAll<string>().as('waiting'),
        sql<string>`(array_agg(id ORDER BY updated_at, id))[1]`.as('oldest_id'),
        // Named after its column on purpose: values are converted by output column name, so this comes back as a Date.
        eb.fn.min('updated_at').as('updated_at'),
      ])
      .where('status', '=', 'awaiting_verification')
      .where('updated_at', '<', sql<Date>`now() - make_interval(mins => ${minutes})`)
      .groupBy(['brand_id', 'mode'])
      .execute();
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
