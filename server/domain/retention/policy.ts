import { z } from 'zod';

/**
 * How long each table that grows with traffic keeps its rows (README
 * "Retention", SECURITY.md "Retention"). Environment variables, not console
 * settings: the periods are the installation's data policy, owned by whoever
 * runs it and answers to its auditor, the same for every brand; a console
 * admin able to shorten them could erase the evidence of their own changes.
 */
const days = (fallback: number, min: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number of days')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min} days`))
    .default(fallback);

/** Environment variables of the retention job (spread into config.ts's schema). */
export const retentionEnvShape = {
  /**
   * SMS sender and text (personal data) are dropped this long after the SMS arrived; the parsed evidence stays.
   * Push notifications to phones and finished outbound SMS, whose texts are personal data too, go after as long.
   */
  RETENTION_SMS_TEXT_DAYS: days(90, 1),
  /** Webhook attempts (each HTTP try, with the receiver's answer), per month partition. */
  RETENTION_WEBHOOK_ATTEMPT_DAYS: days(90, 1),
  /** Finished webhook deliveries (delivered or dead-lettered); open ones are never removed. */
  RETENTION_WEBHOOK_DELIVERY_DAYS: days(180, 1),
  /** Webhook events (the events feed) with their receipts. */
  RETENTION_EVENT_DAYS: days(400, 1),
  /** Finished backfill requests and phone sequence counters not seen since. */
  RETENTION_RECOVERY_DAYS: days(180, 1),
  /** The audit log: past it, rows are counted and reported, never removed by the service (README "Retention"). */
  RETENTION_AUDIT_DAYS: days(7 * 365 + 2, 365),
  /** Rows one statement removes or clears at most. */
  RETENTION_BATCH_SIZE: z
    .string()
    .regex(/^\d+$/, 'must be a whole number of rows')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be between 1 and 10000').max(10_000, 'must be between 1 and 10000'))
    .default(1000),
};

export interface RetentionPeriods {
  RETENTION_SMS_TEXT_DAYS: number;
  RETENTION_WEBHOOK_ATTEMPT_DAYS: number;
  RETENTION_WEBHOOK_DELIVERY_DAYS: number;
  RETENTION_EVENT_DAYS: number;
  RETENTION_RECOVERY_DAYS: number;
  RETENTION_AUDIT_DAYS: number;
  RETENTION_BATCH_SIZE: number;
}

/**
 * A delivery is removed with its event, and its attempts with it, so a shorter
 * event period would silently shorten the others: refused at start-up.
 */
export function retentionProblems(p: RetentionPeriods): string[] {
  const problems: string[] = [];
  if (p.RETENTION_WEBHOOK_DELIVERY_DAYS < p.RETENTION_WEBHOOK_ATTEMPT_DAYS) {
    problems.push(`RETENTION_WEBHOOK_DELIVERY_DAYS: must be at least RETENTION_WEBHOOK_ATTEMPT_DAYS (${p.RETENTION_WEBHOOK_ATTEMPT_DAYS}): removing a delivery removes its attempts`);
  }
  if (p.RETENTION_EVENT_DAYS < p.RETENTION_WEBHOOK_DELIVERY_DAYS) {
    problems.push(`RETENTION_EVENT_DAYS: must be at least RETENTION_WEBHOOK_DELIVERY_DAYS (${p.RETENTION_WEBHOOK_DELIVERY_DAYS}): removing an event removes its deliveries`);
  }
  return problems;
}
