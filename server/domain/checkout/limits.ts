import { AppError } from '../../../contract/common/errors.ts';
import type { Db } from '../db.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import { incrementReplacements, incrementTakenAnswers, lockIntentWithCounts } from './queries.ts';

/**
 * How often one payment's customer may replace a submitted gateway transaction
 * id. Enough for honest typos; small, because anyone holding the link can
 * replace, and each replacement releases a claim.
 */
export const MAX_SUBMISSION_REPLACEMENTS = 3;

/**
 * How often the checkout of one payment answers GATEWAY_TRX_ID_TAKEN. Each such
 * answer tells the caller that another payment of the same brand claims the id;
 * after this many, every further submission on the payment is refused with
 * SUBMISSION_LIMIT_REACHED, so the link cannot be used to test ids one by one.
 */
export const MAX_TAKEN_ANSWERS = 3;

export interface CheckoutGuard {
  intentId: number;
  brandId: number;
  replacements: number;
  takenAnswers: number;
}

/**
 * Locks the payment intent (the first row lock of every payment change, so
 * the lock order stays intent then transaction) and refuses what no checkout
 * call may do for it: an unknown payment (PAYMENT_NOT_FOUND) or a disabled
 * brand (BRAND_DISABLED). With `submitting`, also a payment that has used up
 * its taken-id answers (SUBMISSION_LIMIT_REACHED).
 */
export async function lockCheckoutGuard(tx: Db, paymentId: string, opts: { submitting: boolean }): Promise<CheckoutGuard> {
  if (!tx.isTransaction) throw new Error('lockCheckoutGuard must run inside a transaction');
  if (!isUuid(paymentId)) throw new AppError('PAYMENT_NOT_FOUND');
  const r = await lockIntentWithCounts(tx, paymentId.toLowerCase());
  if (!r) throw new AppError('PAYMENT_NOT_FOUND');
  if (r.brand_status !== 'active') throw new AppError('BRAND_DISABLED');
  const guard = { intentId: r.intent_id, brandId: r.brand_id, replacements: r.replacements ?? 0, takenAnswers: r.taken_answers ?? 0 };
  if (opts.submitting && guard.takenAnswers >= MAX_TAKEN_ANSWERS) {
    throw new AppError('SUBMISSION_LIMIT_REACHED', undefined, { field: 'gateway_trx_id' });
  }
  return guard;
}

/**
 * Counts one GATEWAY_TRX_ID_TAKEN answer for the payment, in its own statement
 * (the refused attempt itself was rolled back), atomically, so concurrent
 * probes cannot each see a count below the bound. Returns the error to answer
 * with: the taken answer while within the bound, the generic refusal after it.
 */
export async function countTakenAnswer(em: Db, intentId: number, taken: AppError): Promise<AppError> {
  return (await incrementTakenAnswers(em, intentId)) > MAX_TAKEN_ANSWERS ? new AppError('SUBMISSION_LIMIT_REACHED', undefined, { field: 'gateway_trx_id' }) : taken;
}

/** Counts one replacement, inside the replacement's own transaction (both or neither). Returns the new count. */
export async function countReplacement(tx: Db, intentId: number): Promise<number> {
  return incrementReplacements(tx, intentId);
}

export function isTaken(err: unknown): err is AppError {
  return err instanceof AppError && err.code === 'GATEWAY_TRX_ID_TAKEN';
}
