import type { AppDeps } from '../../deps.ts';
import type { Db } from '../db.ts';
import type { RetentionPeriods } from './policy.ts';
import {
  ATTEMPTS_TABLE,
  countAuditRowsOlderThan,
  createAttemptPartition,
  defaultPartitionHoldsRange,
  deleteDefaultPartitionAttemptsBatch,
  deleteEventsBatch,
  deleteFinishedBackfillsBatch,
  deleteFinishedDeliveriesBatch,
  deleteFinishedOutboundSmsBatch,
  deleteNotificationsBatch,
  deleteIdleSequenceCountersBatch,
  dropAttemptPartition,
  expireSmsTextBatch,
  listAttemptPartitions,
} from './queries.ts';

/** Month partitions kept ready beyond the current month, so an attempt never lands in the default partition. */
export const PARTITION_MONTHS_AHEAD = 2;
/** How long a partition's DDL waits for the parent's lock before giving up until the next run. */
const PARTITION_LOCK_TIMEOUT_MS = 5000;
/** Batches per table per run: a backlog (a first run, a shortened period) is worked off over several runs. */
const MAX_BATCHES = 50;

/** A month's partition name: `webhook_attempts_p202611` holds November 2026 (UTC). */
export function attemptPartitionName(monthStart: Date): string {
  return `${ATTEMPTS_TABLE}_p${monthStart.getUTCFullYear()}${String(monthStart.getUTCMonth() + 1).padStart(2, '0')}`;
}

const MONTH_PARTITION = new RegExp(`^${ATTEMPTS_TABLE}_p(\\d{4})(\\d{2})$`);

/** The month a partition the job made holds, or null for any other (the default partition). */
export function attemptPartitionMonth(name: string): Date | null {
  const m = MONTH_PARTITION.exec(name);
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1)) : null;
}

const monthStart = (d: Date, plus = 0) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + plus, 1));

export interface PartitionChanges {
  created: string[];
  dropped: string[];
  /** Months left to the default partition because it already holds rows of them. */
  skipped: string[];
}

/**
 * Creates the current and the next PARTITION_MONTHS_AHEAD months' partitions
 * of the webhook attempts, and drops those whose whole month is older than
 * `attemptDays` (an attempt is kept at least that long, at most a month more).
 * A month the default partition already holds rows of (the month the table was
 * partitioned in) stays in the default partition, whose rows expire by batched
 * delete.
 */
export async function maintainAttemptPartitions(db: Db, attemptDays: number, now = new Date()): Promise<PartitionChanges> {
  const existing = new Set(await listAttemptPartitions(db));
  const changes: PartitionChanges = { created: [], dropped: [], skipped: [] };
  for (let i = 0; i <= PARTITION_MONTHS_AHEAD; i++) {
    const from = monthStart(now, i);
    const to = monthStart(now, i + 1);
    const name = attemptPartitionName(from);
    if (existing.has(name)) continue;
    if (await defaultPartitionHoldsRange(db, from, to)) {
      changes.skipped.push(name);
      continue;
    }
    await createAttemptPartition(db, name, from, to, PARTITION_LOCK_TIMEOUT_MS);
    changes.created.push(name);
  }
  const cutoff = now.getTime() - attemptDays * 86_400_000;
  for (const name of existing) {
    const month = attemptPartitionMonth(name);
    if (month && monthStart(month, 1).getTime() <= cutoff) {
      await dropAttemptPartition(db, name, PARTITION_LOCK_TIMEOUT_MS);
      changes.dropped.push(name);
    }
  }
  return changes;
}

async function inBatches(batch: () => Promise<number>, limit: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await batch();
    total += n;
    if (n < limit) break;
  }
  return total;
}

/** What one run did: counts only (no record's content, sender or id). */
export interface RetentionReport {
  sms_text_expired: number;
  notifications_deleted: number;
  outbound_sms_deleted: number;
  webhook_attempt_partitions_created: string[];
  webhook_attempt_partitions_dropped: string[];
  webhook_attempts_deleted: number;
  webhook_deliveries_deleted: number;
  webhook_events_deleted: number;
  backfill_requests_deleted: number;
  sequence_counters_deleted: number;
  audit_rows_past_retention: number;
}

/**
 * One run of the retention job: every period of README "Retention", each
 * table in batches of RETENTION_BATCH_SIZE. Idempotent: a second run finds
 * nothing more to do; a run stopped halfway is finished by the next. A step
 * that fails (a partition change that could not get its lock in time) is
 * logged and the others still run; the run then throws naming it, so the job
 * shows as failed, and the next hour tries again.
 */
export async function enforceRetention(deps: Pick<AppDeps, 'db' | 'logger'> & { config: RetentionPeriods }, now = new Date()): Promise<RetentionReport> {
  const { db, config: c } = deps;
  const limit = c.RETENTION_BATCH_SIZE;
  const failed: string[] = [];
  async function step<T>(name: string, fallback: T, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      failed.push(name);
      deps.logger.error({ step: name, err: { message: err instanceof Error ? err.message : String(err) } }, 'retention step failed');
      return fallback;
    }
  }
  const batched = (name: string, batch: () => Promise<number>) => step(name, 0, () => inBatches(batch, limit));

  const partitions = await step<PartitionChanges>('webhook_attempt_partitions', { created: [], dropped: [], skipped: [] }, () => maintainAttemptPartitions(db, c.RETENTION_WEBHOOK_ATTEMPT_DAYS, now));
  if (partitions.skipped.length) {
    deps.logger.info({ months: partitions.skipped }, 'retention: webhook attempt months left in the default partition (it already holds rows of them)');
  }
  const report: RetentionReport = {
    sms_text_expired: await batched('sms_text', () => expireSmsTextBatch(db, c.RETENTION_SMS_TEXT_DAYS, limit)),
    notifications_deleted: await batched('notifications', () => deleteNotificationsBatch(db, c.RETENTION_SMS_TEXT_DAYS, limit)),
    outbound_sms_deleted: await batched('outbound_sms', () => deleteFinishedOutboundSmsBatch(db, c.RETENTION_SMS_TEXT_DAYS, limit)),
    webhook_attempt_partitions_created: partitions.created,
    webhook_attempt_partitions_dropped: partitions.dropped,
    webhook_attempts_deleted: await batched('webhook_attempts', () => deleteDefaultPartitionAttemptsBatch(db, c.RETENTION_WEBHOOK_ATTEMPT_DAYS, limit)),
    webhook_deliveries_deleted: await batched('webhook_deliveries', () => deleteFinishedDeliveriesBatch(db, c.RETENTION_WEBHOOK_DELIVERY_DAYS, limit)),
    webhook_events_deleted: await batched('webhook_events', () => deleteEventsBatch(db, c.RETENTION_EVENT_DAYS, limit)),
    backfill_requests_deleted: await batched('backfill_requests', () => deleteFinishedBackfillsBatch(db, c.RETENTION_RECOVERY_DAYS, limit)),
    sequence_counters_deleted: await batched('sequence_counters', () => deleteIdleSequenceCountersBatch(db, c.RETENTION_RECOVERY_DAYS, limit)),
    audit_rows_past_retention: await step('audit_log', 0, () => countAuditRowsOlderThan(db, c.RETENTION_AUDIT_DAYS)),
  };
  deps.logger.info(report, 'retention run');
  if (report.audit_rows_past_retention > 0) {
    deps.logger.warn({ audit_rows_past_retention: report.audit_rows_past_retention }, 'audit rows are past RETENTION_AUDIT_DAYS: a database administrator removes them (README "Retention")');
  }
  if (failed.length) throw new Error(`retention failed: ${failed.join(', ')}`);
  return report;
}
