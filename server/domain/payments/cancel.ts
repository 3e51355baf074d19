import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { PaymentResource } from '../../../contract/merchant/payments.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { transaction, type Db } from '../db.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import { getPaymentView, paymentEventData } from './view.ts';
import { failPendingTransactions, lockIntentOfBrand, lockLiveTransactionsOfIntent, markIntentCanceled } from './queries/intents.ts';

const CANCELED_REASON = 'Payment canceled by the merchant';

/**
 * The merchant cancels an open payment. Takes the same locks in the same order as
 * every other state change of a payment (the intent row first, then its
 * transactions), so an SMS completing the payment at the same moment either
 * completes it first (then this refuses: completed) or waits and finds the
 * transaction failed (then it completes nothing).
 *
 * Cancelable: an intent still `pending` whose latest transaction is absent,
 * `pending` (a gateway chosen, no payment reported: it fails with the intent) or
 * `failed`. Refused with PAYMENT_NOT_CANCELABLE: `awaiting_verification` (the
 * customer reports having sent money; canceling would hide money that may have
 * moved, so an operator verifies or rejects it first), `processing` (an
 * automatic gateway may be taking the money), completed and expired payments.
 * A pending transaction carries no gateway transaction id, so no claim on one
 * is left behind. Canceling again answers the canceled payment, with no second
 * event. `payment.canceled` is recorded in the same database transaction.
 */
export async function cancelPayment(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, paymentId: string): Promise<PaymentResource> {
  if (!isUuid(paymentId)) throw new AppError('PAYMENT_NOT_FOUND');
  await transaction(em, async (tx) => {
    // Past expiry by the database clock, as the expiry job decides.
    const intent = await lockIntentOfBrand(tx, { uuid: paymentId.toLowerCase(), brandId, mode });
    if (!intent) throw new AppError('PAYMENT_NOT_FOUND');
    if (intent.status === 'canceled') return;
    if (intent.status === 'completed') throw new AppError('PAYMENT_NOT_CANCELABLE', 'Payment is completed; refund it instead');
    if (intent.status === 'expired' || intent.past_expiry) throw new AppError('PAYMENT_NOT_CANCELABLE', 'Payment has expired');
    const intentId = intent.id;
    const open = await lockLiveTransactionsOfIntent(tx, intentId);
    const blocking = open.find((t) => t.status !== 'pending');
    if (blocking?.status === 'completed') throw new AppError('PAYMENT_NOT_CANCELABLE', 'Payment is completed; refund it instead');
    if (blocking?.status === 'awaiting_verification') {
      throw new AppError(
        'PAYMENT_NOT_CANCELABLE',
        'The customer has reported paying (awaiting verification); money may already have moved, so it must be verified or rejected first',
      );
    }
    if (blocking) throw new AppError('PAYMENT_NOT_CANCELABLE', 'The gateway is processing the payment; wait for its result');
    if (open.length > 0) await failPendingTransactions(tx, open.map((t) => t.id), CANCELED_REASON);
    await markIntentCanceled(tx, intentId);
    const data = await paymentEventData(tx, intentId);
    await recordEvent(tx, { brandId, mode, event: 'payment.canceled', data, transactionId: (data.transaction_id as number | null) ?? null });
  });
  return getPaymentView(em, keys, brandId, mode, paymentId);
}
