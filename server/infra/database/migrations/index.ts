import type { MigrationObject } from '@mikro-orm/core';

import { Migration0001Foundation } from './0001-foundation.ts';
import { Migration0002Webhooks } from './0002-webhooks.ts';
import { Migration0003Payments } from './0003-payments.ts';
import { Migration0004Devices } from './0004-devices.ts';
import { Migration0005Admin } from './0005-admin.ts';
import { Migration0006Sandbox } from './0006-sandbox.ts';
import { Migration0007SmsMatching } from './0007-sms-matching.ts';
import { Migration0008RateLimits } from './0008-rate-limits.ts';
import { Migration0009SmsCandidatesIndex } from './0009-sms-candidates-index.ts';
import { Migration0010Modes } from './0010-modes.ts';
import { Migration0011PiiBinding } from './0011-pii-binding.ts';
import { Migration0012CheckoutSubmissions } from './0012-checkout-submissions.ts';
import { Migration0013SmsEvidence } from './0013-sms-evidence.ts';
import { Migration0014SmsPresets } from './0014-sms-presets.ts';
import { Migration0016MerchantPayments } from './0016-merchant-payments.ts';
import { Migration0017WebhookEndpoints } from './0017-webhook-endpoints.ts';
import { Migration0018CheckoutFeePayer } from './0018-checkout-fee-payer.ts';
import { Migration0019SmsRecovery } from './0019-sms-recovery.ts';
import { Migration0020SmsFormatAlarms } from './0020-sms-format-alarms.ts';
import { Migration0021Alerts } from './0021-alerts.ts';
import { Migration0022Operators } from './0022-operators.ts';
import { Migration0024SmsDismissals } from './0024-sms-dismissals.ts';
import { Migration0025DevicePresenceHistory } from './0025-device-presence-history.ts';
import { Migration0026CheckInvariant } from './0026-check-invariant.ts';
import { Migration0027ChainOrder } from './0027-chain-order.ts';
import { Migration0028IdempotencyPerMode } from './0028-idempotency-per-mode.ts';
import { Migration0029RefundCompletionReference } from './0029-refund-completion-reference.ts';
import { Migration0030WalletAccounts } from './0030-wallet-accounts.ts';
import { Migration0033SequenceCounters } from './0033-sequence-counters.ts';
import { Migration0034BackfillSenders } from './0034-backfill-senders.ts';
import { Migration0035OwnpayDialect } from './0035-ownpay-dialect.ts';
import { Migration0038Receipts } from './0038-receipts.ts';
import { Migration0039SmsParts } from './0039-sms-parts.ts';
import { Migration0041OwnpayApp } from './0041-ownpay-app.ts';
import { Migration0042DeviceDiagnostics } from './0042-device-diagnostics.ts';
import { Migration0043ApiKeyScopes } from './0043-api-key-scopes.ts';
import { Migration0044BackfillReasons } from './0044-backfill-reasons.ts';
import { Migration0045WalletAccountIndex } from './0045-wallet-account-index.ts';
import { Migration0048CustomerErasure } from './0048-customer-erasure.ts';
import { Migration0050StatementReconciliation } from './0050-statement-reconciliation.ts';
import { Migration0051SmsTextExpiry } from './0051-sms-text-expiry.ts';
import { Migration0052WebhookAttemptsPartitioned } from './0052-webhook-attempts-partitioned.ts';
import { Migration0053RetentionIndexes } from './0053-retention-indexes.ts';
import { Migration0056ReadYourWrites } from './0056-read-your-writes.ts';

/**
 * Every migration, in the order it runs. Listed explicitly rather than globbed
 * from disk so the set that runs is the set that was type-checked and reviewed.
 * Add new ones at the end with the next number; never edit a landed one.
 */
export const migrationsList: MigrationObject[] = [
  { name: '0001-foundation', class: Migration0001Foundation },
  { name: '0002-webhooks', class: Migration0002Webhooks },
  { name: '0003-payments', class: Migration0003Payments },
  { name: '0004-devices', class: Migration0004Devices },
  { name: '0005-admin', class: Migration0005Admin },
  { name: '0006-sandbox', class: Migration0006Sandbox },
  { name: '0007-sms-matching', class: Migration0007SmsMatching },
  { name: '0008-rate-limits', class: Migration0008RateLimits },
  { name: '0009-sms-candidates-index', class: Migration0009SmsCandidatesIndex },
  { name: '0010-modes', class: Migration0010Modes },
  { name: '0011-pii-binding', class: Migration0011PiiBinding },
  { name: '0012-checkout-submissions', class: Migration0012CheckoutSubmissions },
  { name: '0013-sms-evidence', class: Migration0013SmsEvidence },
  { name: '0014-sms-presets', class: Migration0014SmsPresets },
  { name: '0016-merchant-payments', class: Migration0016MerchantPayments },
  { name: '0017-webhook-endpoints', class: Migration0017WebhookEndpoints },
  { name: '0018-checkout-fee-payer', class: Migration0018CheckoutFeePayer },
  { name: '0019-sms-recovery', class: Migration0019SmsRecovery },
  { name: '0020-sms-format-alarms', class: Migration0020SmsFormatAlarms },
  { name: '0021-alerts', class: Migration0021Alerts },
  { name: '0022-operators', class: Migration0022Operators },
  { name: '0024-sms-dismissals', class: Migration0024SmsDismissals },
  { name: '0025-device-presence-history', class: Migration0025DevicePresenceHistory },
  { name: '0026-check-invariant', class: Migration0026CheckInvariant },
  { name: '0027-chain-order', class: Migration0027ChainOrder },
  { name: '0028-idempotency-per-mode', class: Migration0028IdempotencyPerMode },
  { name: '0029-refund-completion-reference', class: Migration0029RefundCompletionReference },
  { name: '0030-wallet-accounts', class: Migration0030WalletAccounts },
  { name: '0033-sequence-counters', class: Migration0033SequenceCounters },
  { name: '0034-backfill-senders', class: Migration0034BackfillSenders },
  { name: '0035-ownpay-dialect', class: Migration0035OwnpayDialect },
  { name: '0038-receipts', class: Migration0038Receipts },
  { name: '0039-sms-parts', class: Migration0039SmsParts },
  { name: '0041-ownpay-app', class: Migration0041OwnpayApp },
  { name: '0042-device-diagnostics', class: Migration0042DeviceDiagnostics },
  { name: '0043-api-key-scopes', class: Migration0043ApiKeyScopes },
  { name: '0044-backfill-reasons', class: Migration0044BackfillReasons },
  { name: '0045-wallet-account-index', class: Migration0045WalletAccountIndex },
  { name: '0048-customer-erasure', class: Migration0048CustomerErasure },
  { name: '0050-statement-reconciliation', class: Migration0050StatementReconciliation },
  { name: '0051-sms-text-expiry', class: Migration0051SmsTextExpiry },
  { name: '0052-webhook-attempts-partitioned', class: Migration0052WebhookAttemptsPartitioned },
  { name: '0053-retention-indexes', class: Migration0053RetentionIndexes },
  { name: '0056-read-your-writes', class: Migration0056ReadYourWrites },
];
