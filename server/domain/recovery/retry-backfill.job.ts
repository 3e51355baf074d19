import type { AppDeps } from '../../deps.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { scheduledSweep } from '../../infra/jobs/scheduled.ts';
import { createNotification } from '../notifications/service.ts';
import { MAX_BACKFILL_ATTEMPTS, nextAttemptDelayMs } from './backfill.ts';

const RETRY_BACKFILL_QUEUE = 'backfill-retry-sweep';

/**
 * One pass over open backfill requests whose next attempt is due: each gets a
 * push notification (the app polls its commands on any notification) and its
 * next attempt later by doubling backoff; after MAX_BACKFILL_ATTEMPTS nudges
 * without an answer it becomes `failed`. Failed requests stay listed in the
 * admin API and are picked up, once, by `takeUnreportedBackfillFailures`
 * (operator alerts). Rows are locked SKIP LOCKED: concurrent sweeps never nudge twice.
 */
export async function retryBackfillRequests(em: EntityManager, cipher: PiiCipher): Promise<{ nudged: number; failed: number }> {
  return em.fork().transactional(async (tx) => {
    const due = await tx.execute<Array<{ id: string; brand_id: string; device_id: string; attempts: number; window_from: Date; window_to: Date }>>(
      `SELECT id, brand_id, device_id, attempts, window_from, window_to FROM backfill_requests
        WHERE status IN ('pending', 'delivered') AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT 200 FOR UPDATE SKIP LOCKED`,
    );
    let nudged = 0;
    let failed = 0;
    for (const r of due) {
      if (r.attempts >= MAX_BACKFILL_ATTEMPTS) {
        await tx.execute("UPDATE backfill_requests SET status = 'failed', failed_at = now(), updated_at = now() WHERE id = ?", [r.id]);
        failed++;
        continue;
      }
      const attempts = r.attempts + 1;
      await tx.execute(
        "UPDATE backfill_requests SET attempts = ?, next_attempt_at = now() + make_interval(secs => ?), updated_at = now() WHERE id = ?",
        [attempts, nextAttemptDelayMs(attempts) / 1000, r.id],
      );
      await createNotification(tx, cipher, {
        brandId: Number(r.brand_id),
        deviceId: Number(r.device_id),
        title: 'Re-send missed SMS',
        body: `The service asks this phone to re-send the payment SMS received between ${new Date(r.window_from).toISOString()} and ${new Date(r.window_to).toISOString()} (request ${r.id}). Open the app to answer it.`,
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
export async function takeUnreportedBackfillFailures(em: EntityManager): Promise<Array<{ id: number; brandId: number; deviceId: number; reason: string; failedAt: Date }>> {
  const rows = await em.execute<Array<{ id: string; brand_id: string; device_id: string; reason: string; failed_at: Date }>>(
    `UPDATE backfill_requests SET reported_at = now() WHERE status = 'failed' AND reported_at IS NULL
     RETURNING id, brand_id, device_id, reason, failed_at`,
  );
  return rows.map((r) => ({ id: Number(r.id), brandId: Number(r.brand_id), deviceId: Number(r.device_id), reason: r.reason, failedAt: new Date(r.failed_at) }));
}

async function runBackfillRetrySweep(deps: Pick<AppDeps, 'orm' | 'logger' | 'crypto'>): Promise<void> {
  const { nudged, failed } = await retryBackfillRequests(deps.orm.em.fork(), deps.crypto.pii);
  if (failed) deps.logger.warn({ failed }, 'backfill requests unanswered after every attempt; listed as failed in the admin API');
  if (nudged) deps.logger.info({ nudged }, 'backfill requests nudged');
}

export function retryBackfillRegistration(): JobRegistration {
  return scheduledSweep(RETRY_BACKFILL_QUEUE, { cron: '* * * * *', run: runBackfillRetrySweep });
}
