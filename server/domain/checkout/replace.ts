import { AppError } from '../../../contract/common/errors.ts';
import type { CheckoutTransaction } from '../../../contract/checkout/payments.ts';
import { recordAudit } from '../audit/service.ts';
import { transaction, type Db } from '../db.ts';
import { cleanGatewayTrxId, getTransaction, replaceLockedGatewayTrxId, type TransactionRecord } from '../payments/transactions.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import { lockGatewayTrxIds } from '../sms/index.ts';
import { countReplacement, countTakenAnswer, isTaken, lockCheckoutGuard, MAX_SUBMISSION_REPLACEMENTS } from './limits.ts';
import type { CheckoutPayDeps } from './pay.ts';
import { loadCheckout } from './view.ts';
import { lockTransaction, selectIntentState, selectLatestTransaction } from './queries.ts';

export interface ReplaceSubmissionInput {
  gatewayTrxId: string;
  senderNumber?: string;
  /** For the audit record. */
  requestId: string | null;
}

const same = (a: string | null, b: string | null) => (a ?? '').trim().toUpperCase() === (b ?? '').trim().toUpperCase();

/**
 * The customer typed the wrong gateway transaction id (or someone holding the
 * link typed a made-up one): while the payment's manual-gateway transaction
 * awaits verification, a new id replaces the old, at most
 * MAX_SUBMISSION_REPLACEMENTS times per payment. The old claim is released in
 * the same statement (the row no longer holds it), each replacement is audited
 * (old and new id, no sender number), and once committed the stored SMS are
 * matched against the new claim, as for a first submission. The gateway and
 * amount stay: another gateway would mean another amount to send.
 *
 * Lock order as SMS matching (gateway-trx-lock.ts): both ids' advisory locks,
 * then the intent, then the transaction. An SMS carrying either id is decided
 * entirely before or entirely after the replacement: before, it completes the
 * payment and the replacement is refused (PAYMENT_ALREADY_STARTED); after, it
 * sees the new claim only. A completed, failed or expired payment is never
 * touched.
 */
export async function replaceCheckoutSubmission(
  em: Db,
  deps: CheckoutPayDeps,
  paymentId: string,
  input: ReplaceSubmissionInput,
): Promise<CheckoutTransaction> {
  let intentId: number | null = null;
  let result: { transaction: TransactionRecord; changed: boolean };
  try {
    result = await replaceOnce(em, deps, paymentId, input, (id) => (intentId = id));
  } catch (err) {
    if (isTaken(err) && intentId !== null) throw await countTakenAnswer(em, intentId, err);
    throw err;
  }
  if (result.changed && deps.matchSubmittedTransaction) {
    try {
      await deps.matchSubmittedTransaction(em, result.transaction.id);
    } catch (err) {
      deps.logger.error(
        { transaction_id: result.transaction.id, err: { message: err instanceof Error ? err.message : String(err) } },
        'matching a replaced checkout submission failed; it keeps waiting',
      );
    }
  }
  const { view } = await loadCheckout(em, paymentId, deps.links);
  return view.transaction!;
}

async function replaceOnce(
  em: Db,
  deps: CheckoutPayDeps,
  paymentId: string,
  input: ReplaceSubmissionInput,
  guarded: (intentId: number) => void,
): Promise<{ transaction: TransactionRecord; changed: boolean }> {
  if (!isUuid(paymentId)) throw new AppError('PAYMENT_NOT_FOUND');
  const wanted = cleanGatewayTrxId(input.gatewayTrxId);
  return transaction(em, async (tx) => {
    // The current claim, read unlocked to know which advisory locks to take; checked again under them.
    const seen = await latestTransaction(tx, paymentId);
    await lockGatewayTrxIds(tx, [seen?.gateway_trx_id, wanted]);
    const guard = await lockCheckoutGuard(tx, paymentId, { submitting: true });
    guarded(guard.intentId);
    const intent = await selectIntentState(tx, guard.intentId);
    const latest = await latestTransaction(tx, paymentId);
    if (!latest) throw notReplaceable('nothing has been submitted for this payment yet');
    await lockTransaction(tx, latest.id);
    const t = await getTransaction(tx, latest.id);
    if (t.status === 'completed' || intent.status === 'completed') throw new AppError('PAYMENT_ALREADY_STARTED', 'Payment is already completed');
    if (t.status === 'expired' || intent.status === 'expired' || intent.past_expiry) throw new AppError('PAYMENT_EXPIRED');
    if (t.status !== 'awaiting_verification' || t.gatewayType !== 'manual') throw notReplaceable(`the payment is ${t.status}`);
    // Another replacement won the race for a claim we did not lock: start over with the current one.
    if (!same(t.gatewayTrxId, seen?.gateway_trx_id ?? null)) throw new AppError('CONFLICT', 'The transaction id was changed at the same moment; reload and try again');
    if (same(t.gatewayTrxId, wanted)) return { transaction: t, changed: false };
    if (guard.replacements >= MAX_SUBMISSION_REPLACEMENTS) {
      throw new AppError('SUBMISSION_LIMIT_REACHED', `The transaction id of this payment was already changed ${MAX_SUBMISSION_REPLACEMENTS} times; please contact the merchant`, {
        field: 'gateway_trx_id',
      });
    }
    const replaced = await replaceLockedGatewayTrxId(tx, deps.keys, t, { gatewayTrxId: wanted, senderNumber: input.senderNumber ?? null });
    const n = await countReplacement(tx, guard.intentId);
    await recordAudit(
      tx,
      { actor: 'checkout', requestId: input.requestId },
      {
        action: 'transaction.replace_gateway_trx_id',
        targetType: 'transaction',
        targetId: t.id,
        brandId: t.brandId,
        before: { gateway_trx_id: t.gatewayTrxId, status: t.status },
        after: { gateway_trx_id: replaced.gatewayTrxId, status: replaced.status, replacement: n, max_replacements: MAX_SUBMISSION_REPLACEMENTS },
      },
    );
    return { transaction: replaced, changed: true };
  });
}

function notReplaceable(why: string): AppError {
  return new AppError('INVALID_STATE', `Only a transaction id awaiting verification can be changed; ${why}`, { field: 'gateway_trx_id' });
}

async function latestTransaction(tx: Db, paymentId: string): Promise<{ id: number; gateway_trx_id: string | null } | null> {
  const row = await selectLatestTransaction(tx, paymentId.toLowerCase());
  return row ?? null;
}
