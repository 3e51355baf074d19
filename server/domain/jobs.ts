import type { JobRegistration } from '../infra/jobs/workers.ts';
import { minuteSweeps } from '../infra/jobs/scheduled.ts';
import { smsFormatAlarmRegistration } from './sms/templates/format-alarm.job.ts';
import { deliverWebhookRegistration } from './webhooks/deliver-webhook.job.ts';
import { presenceSweep } from './devices/detect-offline-devices.job.ts';
import { outboundSmsSweep } from './outbound-sms/sweep-outbound-sms.job.ts';
import { sendSandboxCallbackRegistration } from './sandbox/send-sandbox-callback.job.ts';
import { completeSandboxRefundRegistration } from './sandbox/complete-sandbox-refund.job.ts';
import { intentExpirySweep } from './payments/expire-intents.job.ts';
import { purgeIdempotencyKeysRegistration } from './idempotency/purge-idempotency-keys.job.ts';
import { pendingSmsSweep } from './sms/matching/match-pending-sms.job.ts';
import { stalePartsSweep } from './sms/intake/settle-stale-parts.job.ts';
import { backfillRetrySweep } from './recovery/retry-backfill.job.ts';
import { deliverAlertRegistration } from './alerts/deliver-alert.job.ts';
import { reviewWaitingSweep } from './alerts/review-waiting.job.ts';
import { receiptsSweep, sendReceiptRegistration } from './receipts/send-receipt.job.ts';
import { retentionRegistration } from './retention/retention.job.ts';

/**
 * The job registry: which handler runs which queue. Every area adds its entry
 * here. Code that only enqueues imports `enqueueInTransaction` from
 * infra/jobs/workers.ts, never this file, so the registry (which imports every
 * job module) is not part of any import cycle.
 *
 * Each registration declares what its job touches (`JobRegistration<D>`, a
 * `Pick` of AppDeps, next to the job); the composition root (bootstrap.ts)
 * starts them all with its AppDeps, which the compiler checks covers each.
 */
export function jobRegistrations(): JobRegistration[] {
  return [
    deliverWebhookRegistration(),
    minuteSweeps([presenceSweep, outboundSmsSweep, intentExpirySweep, pendingSmsSweep, stalePartsSweep, backfillRetrySweep, reviewWaitingSweep, receiptsSweep]),
    purgeIdempotencyKeysRegistration(),
    sendSandboxCallbackRegistration(),
    completeSandboxRefundRegistration(),
    deliverAlertRegistration(),
    smsFormatAlarmRegistration(),
    sendReceiptRegistration(),
    retentionRegistration(),
  ];
}
