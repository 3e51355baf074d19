import type { AppDeps } from '../../deps.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { MinuteSweep } from '../../infra/jobs/scheduled.ts';
import { createNotification } from '../notifications/service.ts';
import { backfillNudge, MAX_BACKFILL_ATTEMPTS, nextAttemptDelayMs } from './backfill.ts';
import { lockDueRequests, markFailed, markNudged, takeUnreportedFailures } from './queries.ts';
import { transaction, type Db } from '../db.ts';

export const RETRY_BACKFILL_SWEEP = 'backfill-retry-sweep';

/**
 * One pass over open backfill requests whose next attempt is due: each gets a
 * push notification (the app polls its commands on any notification) and its
 * next attempt later by doubling backoff; after MAX_BACKFILL_ATTEMPTS nudges
 * without an answer it becomes `failed`. Failed requests stay listed in the
 * admin API and are picked up, once, by `takeUnreportedBackfillFailures`
 * (operator alerts). Rows are locked SKIP LOCKED: concurrent sweeps never nudge twice.
 */
export async function retryBackfillRequests(em: Db, cipher: PiiCipher): Promise<{ nudged: number; failed: number }> {
  return transaction(em, async (tx) => {
    const due = await lockDueRequests(tx, 200);
    let nudged = 0;
    let failed = 0;
    for (const r of due) {
      if (r.attempts >= MAX_BACKFILL_ATTEMPTS) {
        await markFailed(tx, r.id);
        failed++;
        continue;
      }
      const attempts = r.attempts + 1;
      await markNudged(tx, { id: r.id, attempts, delaySeconds: nextAttemptDelayMs(attempts) / 1000 });
      await createNotification(tx, cipher, {
        brandId: r.brand_id,
        deviceId: r.device_id,
        ...backfillNudge(r),
      });
      nudged++;
    }
    return { nudged, failed };
  });
}

/**
 * The hook for operator alerts: failed requests not yet reported, marked
 * reported in the same statement so each is handed out exactly once.
 */
export async function takeUnreportedBackfillFailures(em: Db): Promise<Array<{ id: number; brandId: number; deviceId: number; reason: string; failedAt: Date }>> {
  const rows = await takeUnreportedFailures(em);
  // A failed request always has its failure time (set with the status).
  return rows.map((r) => ({ id: r.id, brandId: r.brand_id, deviceId: r.device_id, reason: r.reason, failedAt: r.failed_at! }));
}

async function runBackfillRetrySweep(deps: Pick<AppDeps, 'db' | 'logger' | 'crypto'>): Promise<void> {
  const { nudged, failed } = await retryBackfillRequests(deps.db, deps.crypto.pii);
  if (failed) deps.logger.warn({ failed }, 'backfill requests unanswered after every attempt; listed as failed in the admin API');
  if (nudged) deps.logger.info({ nudged }, 'backfill requests nudged');
}

/** Runs every minute with the other minute sweeps (infra/jobs/scheduled.ts). */
export const backfillRetrySweep: MinuteSweep<Pick<AppDeps, 'db' | 'logger' | 'crypto'>> = { name: RETRY_BACKFILL_SWEEP, run: runBackfillRetrySweep };
