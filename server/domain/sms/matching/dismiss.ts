import { AppError } from '../../../../contract/common/errors.ts';
import { type Db } from '../../db.ts';
import { MAX_ACTOR_LENGTH, MAX_NOTE_LENGTH, text } from './review.ts';
import { markDismissed, recordState } from './queries/records.ts';

export interface Dismissal {
  smsRecordId: number;
  brandId: number;
  before: { match_status: string; resolution: null };
  after: { match_status: string; resolution: 'dismissed'; reason: string };
}

/**
 * A person looked at a record left for review and it proves no payment (a
 * personal transfer, a test, a payment settled another way): it leaves the
 * review queue as `dismissed`, with who, when and why. Nothing else changes:
 * no transaction completes or fails, the match status stays (docs/matching.md).
 * Conditional on the record still waiting, so two people deciding at once
 * cannot both win: the second gets INVALID_STATE.
 * Errors: SMS_RECORD_NOT_FOUND; INVALID_STATE (not waiting for review); VALIDATION_ERROR.
 */
export async function dismissSmsRecord(em: Db, input: { smsRecordId: number; actor: string; reason: string; brandIds?: readonly number[] | null }): Promise<Dismissal> {
  const reason = text(input.reason, 'reason', { required: true, max: MAX_NOTE_LENGTH })!;
  const actor = input.actor.slice(0, MAX_ACTOR_LENGTH);
  const brandIds = input.brandIds ?? null;
  const updated = await markDismissed(em, { id: input.smsRecordId, actor, reason, brandIds });
  if (updated) {
    return {
      smsRecordId: Number(updated.id),
      brandId: Number(updated.brand_id),
      before: { match_status: updated.match_status, resolution: null },
      after: { match_status: updated.match_status, resolution: 'dismissed', reason },
    };
  }
  const existing = await recordState(em, { id: input.smsRecordId, brandIds });
  if (!existing) throw new AppError('SMS_RECORD_NOT_FOUND');
  throw new AppError(
    'INVALID_STATE',
    existing.resolution !== null
      ? `SMS record ${input.smsRecordId} was already resolved (${existing.resolution})`
      : `SMS record ${input.smsRecordId} is ${existing.match_status}; only a no_candidate, low_confidence or balance_mismatch record waits for review`,
  );
}
