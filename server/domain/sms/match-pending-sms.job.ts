import type { Queue } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { loadMatchSettings, matchSmsRecord } from './service.ts';

export const MATCH_PENDING_SMS_QUEUE = 'sms-match-pending';

const PAGE = 100;
const MAX_PER_RUN = 2_000;
/** Intake matches its records right after storing them; the sweep only takes what that left behind. */
const DEFAULT_MIN_AGE_SECONDS = 60;

/** One sweep at a time service-wide; a run that finds one still going is dropped. */
export const matchPendingSmsQueue: Queue = {
  name: MATCH_PENDING_SMS_QUEUE,
  policy: 'exclusive',
  retryLimit: 0,
  expireInSeconds: 300,
  deleteAfterSeconds: 24 * 60 * 60,
  notify: true,
};

/**
 * Matches SMS records still `pending` (intake's matching failed, or the
 * process stopped between storing and matching), oldest first. A record that
 * fails again is counted and skipped, so one bad record never holds up the
 * others; it is retried on the next run.
 */
export async function runPendingSmsSweep(
  deps: Pick<AppDeps, 'orm' | 'logger' | 'crypto'>,
  opts: { minAgeSeconds?: number } = {},
): Promise<{ decided: number; failed: number }> {
  const em = deps.orm.em.fork();
  const settings = await loadMatchSettings(em);
  let decided = 0;
  let failed = 0;
  let after = 0;
  for (let seen = 0; seen < MAX_PER_RUN; ) {
    const rows = await em.execute<Array<{ id: string }>>(
      `SELECT id FROM sms_records
        WHERE match_status = 'pending' AND id > ? AND server_received_at <= now() - make_interval(secs => ?)
        ORDER BY id LIMIT ?`,
      [after, opts.minAgeSeconds ?? DEFAULT_MIN_AGE_SECONDS, PAGE],
    );
    for (const { id } of rows) {
      after = Number(id);
      try {
        if (await matchSmsRecord(deps.orm.em.fork(), { cipher: deps.crypto.pii }, after, settings)) decided++;
      } catch (err) {
        failed++;
        deps.logger.error({ sms_record_id: after, err: { message: err instanceof Error ? err.message : String(err) } }, 'SMS matching sweep: record left pending');
      }
    }
    seen += rows.length;
    if (rows.length < PAGE) break;
  }
  if (decided || failed) deps.logger.info({ decided, failed }, 'SMS matching sweep');
  return { decided, failed };
}

async function start(deps: AppDeps): Promise<{ stop(): Promise<void> }> {
  await deps.boss.work(MATCH_PENDING_SMS_QUEUE, { pollingIntervalSeconds: 15 }, async () => {
    await runPendingSmsSweep(deps);
  });
  // pg-boss's scheduler fires each minute once across every process sharing the database.
  await deps.boss.schedule(MATCH_PENDING_SMS_QUEUE, '* * * * *');
  return { stop: () => deps.boss.offWork(MATCH_PENDING_SMS_QUEUE, { wait: true }) };
}

export function matchPendingSmsRegistration(): JobRegistration {
  return { queue: matchPendingSmsQueue, start };
}
