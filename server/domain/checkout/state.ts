import type { IntentStatus, TransactionStatus } from '../payments/entities.ts';

export type CheckoutStatus = TransactionStatus | 'canceled';

const OPEN: readonly TransactionStatus[] = ['pending', 'processing', 'awaiting_verification'];

/**
 * Pure: what the checkout shows and whether it takes a new payment attempt.
 * Completed wins over everything (money arrived, also when it arrived after the
 * link's expiry); then the merchant's cancellation; then expiry, by time even before the expiry job has run
 * (`Payment link has expired` the moment `expires_at` passes); then the latest
 * transaction: open ones block a second attempt, a failed one may be retried.
 */
export function checkoutState(input: {
  intentStatus: IntentStatus;
  pastExpiry: boolean;
  transactionStatus: TransactionStatus | null;
}): { status: CheckoutStatus; payable: boolean } {
  const { intentStatus, pastExpiry, transactionStatus } = input;
  if (intentStatus === 'completed' || transactionStatus === 'completed') return { status: 'completed', payable: false };
  if (intentStatus === 'canceled') return { status: 'canceled', payable: false };
  if (intentStatus === 'expired' || pastExpiry || transactionStatus === 'expired') return { status: 'expired', payable: false };
  if (transactionStatus !== null && OPEN.includes(transactionStatus)) return { status: transactionStatus, payable: false };
  if (transactionStatus === 'failed') return { status: 'failed', payable: true };
  return { status: 'pending', payable: true };
}
