import type { JobRegistration } from '../infra/jobs/workers.ts';
import { smsFormatAlarmRegistration } from './sms/format-alarm.job.ts';
import { deliverWebhookRegistration } from './webhooks/deliver-webhook.job.ts';
import { detectOfflineDevicesRegistration } from './devices/detect-offline-devices.job.ts';
import { sweepOutboundSmsRegistration } from './outbound-sms/sweep-outbound-sms.job.ts';
import { sendSandboxCallbackRegistration } from './sandbox/send-sandbox-callback.job.ts';
import { completeSandboxRefundRegistration } from './sandbox/complete-sandbox-refund.job.ts';
import { expireIntentsRegistration } from './payments/expire-intents.job.ts';
import { purgeIdempotencyKeysRegistration } from './idempotency/purge-idempotency-keys.job.ts';
import { matchPendingSmsRegistration } from './sms/match-pending-sms.job.ts';
import { retryBackfillRegistration } from './recovery/retry-backfill.job.ts';
import { deliverAlertRegistration } from './alerts/deliver-alert.job.ts';
import { reviewWaitingRegistration } from './alerts/review-waiting.job.ts';

/**
 * The job registry: which handler runs which queue. Every area adds its entry
 * here. Code that only enqueues imports `enqueueInTransaction` from
 * infra/jobs/workers.ts, never this file, so the registry (which imports every
 * job module) is not part of any import cycle.
 */
export function jobRegistrations(): JobRegistration[] {
  return [
    deliverWebhookRegistration(),
    detectOfflineDevicesRegistration(),
    sweepOutboundSmsRegistration(),
    expireIntentsRegistration(),
    purgeIdempotencyKeysRegistration(),
    sendSandboxCallbackRegistration(),
    completeSandboxRefundRegistration(),
    matchPendingSmsRegistration(),
    retryBackfillRegistration(),
    deliverAlertRegistration(),
    reviewWaitingRegistration(),
    smsFormatAlarmRegistration(),
  ];
}
