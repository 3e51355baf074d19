/**
 * The SMS module: what the rest of the service may use of it (the lint allows
 * no other way in, but for wording.ts and the registries of entities and jobs).
 * Inside, three parts: `intake/` stores what a phone forwards (or an operator
 * pastes), each SMS once; `matching/` decides which payment an SMS proves
 * (docs/matching.md) and keeps the balance chains; `templates/` reads a
 * wallet's wording and watches for wording changes.
 */

// Intake.
export { ingestForwardedBatch } from './intake/screened.ts';
export { ingestSmsBatch } from './intake/service.ts';
export type { MatchSmsRecords } from './intake/matching-seam.ts';
export type { SmsRecordStatus } from './intake/entities.ts';
export { smsContentHash } from './intake/content-hash.ts';
export { SMS_RECORD_CONTEXT, smsRowBinding } from './intake/record-cipher.ts';

// Matching.
export { createSmsMatcher } from './matching/service.ts';
export { createSubmissionMatcher } from './matching/submission.ts';
export { rejectTransaction, verifyTransactionManually } from './matching/review.ts';
export { lockGatewayTrxIds } from './matching/gateway-trx-lock.ts';
export { maskPayerNumber, smsNumberToE164 } from './matching/payer-number.ts';
export { getAdminSmsRecord, listAdminSmsRecords } from './matching/admin-records.ts';
export { dismissSmsRecordAudited } from './matching/admin-dismissals.ts';

// Templates: trying a gateway's templates on stored SMS, and the format-change alarms.
export { currentConfig, evaluateConfigs, evaluateTemplates } from './templates/template-evaluation.ts';
export { listFormatAlarms } from './templates/format-alarm.ts';
