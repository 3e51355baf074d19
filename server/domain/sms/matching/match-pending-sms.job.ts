import type { AppDeps } from '../../../deps.ts';
import type { MinuteSweep } from '../../../infra/jobs/scheduled.ts';
import { loadMatchSettings, matchSmsRecord } from './service.ts';
import { pendingRecordIds } from './queries/records.ts';
export const MATCH_PENDING_SMS_SWEEP = 'sms-match-pending';

const PAGE = 100;
const MAX_PER_RUN = 2_000;
/** Intake matches its records right after storing them; the sweep only takes what that left behind. */
const DEFAULT_MIN_AGE_SECONDS = 60;

/**
 * Matches SMS records still `pending` (intake's matching failed, or the
 * process stopped between storing and matching), oldest first. A record that
 * fails again is counted and skipped, so one bad record never holds up the
 * others; it is retried on the next run.
 */
export async function runPendingSmsSweep(
  deps: Pick<AppDeps, 'db' | 'logger' | 'crypto'>,
  opts: { minAgeSeconds?: number } = {},
): Promise<{ decided: number; failed: number }> {
  const em = deps.db;
  const settings = await loadMatchSettings(em);
  let decided = 0;
  let failed = 0;
  let after = 0;
  for (let seen = 0; seen < MAX_PER_RUN; ) {
    const rows = await pendingRecordIds(em, { afterId: after, minAgeSeconds: opts.minAgeSeconds ?? DEFAULT_MIN_AGE_SECONDS, limit: PAGE });
    for (const id of rows) {
      after = id;
      try {
        if (await matchSmsRecord(deps.db, { cipher: deps.crypto.pii }, after, settings)) decided++;
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

/** Runs every minute with the other minute sweeps (infra/jobs/scheduled.ts). */
export const pendingSmsSweep: MinuteSweep<Pick<AppDeps, 'db' | 'logger' | 'crypto'>> = { name: MATCH_PENDING_SMS_SWEEP, run: (deps) => runPendingSmsSweep(deps) };
