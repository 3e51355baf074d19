import { z } from 'zod';
import type { Job } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { DELIVER_ALERT_QUEUE } from './raise.ts';
import { sendAlertMail } from './email.ts';
import { mailFailureReason } from '../../infra/mail.ts';
import { finishAttempt, startAttempt } from './queries.ts';
const deliverAlertPayload = z.object({ alertId: z.number().int().positive() });

/** Attempts before an alert is marked failed; pg-boss spaces them with exponential backoff. */
const ALERT_MAX_ATTEMPTS = 6;

/**
 * One attempt: counts it on the row first (so a crash mid-send still shows),
 * sends, records the outcome. A failure throws so pg-boss retries with backoff,
 * until the last attempt marks the alert `failed` for the admin API to show.
 */
/** What the alert worker touches: the alerts, the job queue, the log and the mail settings. */
export type DeliverAlertDeps = Pick<AppDeps, 'db' | 'boss' | 'config' | 'logger'>;

async function deliverAlert(deps: Omit<DeliverAlertDeps, 'boss'>, data: unknown): Promise<void> {
  const { alertId } = deliverAlertPayload.parse(data);
  const em = deps.db;
  const row = await startAttempt(em, alertId);
  if (!row) return;
  const { SMTP_URL, ALERT_EMAIL_TO, ALERT_EMAIL_FROM } = deps.config;
  const log = { alert_id: alertId, type: row.type, attempt: row.attempts };
  if (!SMTP_URL || !ALERT_EMAIL_TO?.length) {
    await finishAttempt(em, alertId, { status: 'failed', error: 'no alert channel configured' });
    deps.logger.warn(log, 'alert not delivered: no channel configured');
    return;
  }
  try {
    await sendAlertMail({
      smtpUrl: SMTP_URL,
      from: ALERT_EMAIL_FROM,
      to: ALERT_EMAIL_TO,
      mail: { id: row.id, brandId: row.brand_id, type: row.type, subject: row.subject, details: row.details, createdAt: row.created_at },
    });
  } catch (err) {
    // The SMTP reply code only: the URL (with its password) is never logged or stored.
    const reason = mailFailureReason(err);
    const last = row.attempts >= ALERT_MAX_ATTEMPTS;
    await finishAttempt(em, alertId, { status: last ? 'failed' : 'pending', error: reason });
    deps.logger.warn({ ...log, error: reason, final: last }, 'alert delivery failed');
    if (last) return;
    throw new Error(`alert delivery failed: ${reason}`, { cause: err });
  }
  await finishAttempt(em, alertId, { status: 'delivered' });
  deps.logger.info(log, 'alert delivered');
}

export function deliverAlertRegistration(): JobRegistration<DeliverAlertDeps> {
  return {
    queue: {
      name: DELIVER_ALERT_QUEUE,
      policy: 'short',
      retryLimit: ALERT_MAX_ATTEMPTS - 1,
      retryDelay: 5,
      retryBackoff: true,
      expireInSeconds: 120,
      deleteAfterSeconds: 7 * 24 * 60 * 60,
      notify: true,
    },
    async start(deps) {
      // Retries wait out their backoff unannounced; only polling finds them.
      await deps.boss.work(DELIVER_ALERT_QUEUE, { pollingIntervalSeconds: 2, notifyPollingIntervalSeconds: 2 }, async (jobs: Job<unknown>[]) => {
        for (const job of jobs) await deliverAlert(deps, job.data);
      });
      return { stop: () => deps.boss.offWork(DELIVER_ALERT_QUEUE, { wait: true }) };
    },
  };
}
