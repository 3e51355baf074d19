import { describe, expect, it } from 'vitest';
import { checkoutState, type CheckoutStatus } from '../../server/domain/checkout/state.ts';
import type { IntentStatus, TransactionStatus } from '../../server/domain/payments/entities.ts';

describe('checkoutState: what the checkout shows and whether it takes a new attempt', () => {
  const cases: Array<[IntentStatus, boolean, TransactionStatus | null, CheckoutStatus, boolean]> = [
    // intent, past expiry, latest transaction -> status, payable
    ['pending', false, null, 'pending', true],
    ['pending', false, 'failed', 'failed', true],
    ['pending', false, 'pending', 'pending', false],
    ['pending', false, 'processing', 'processing', false],
    ['pending', false, 'awaiting_verification', 'awaiting_verification', false],
    ['completed', false, 'completed', 'completed', false],
    // Money that arrived wins over the link's expiry.
    ['completed', true, 'completed', 'completed', false],
    ['pending', true, 'completed', 'completed', false],
    // Expired by time before the job ran, with or without an open transaction.
    ['pending', true, null, 'expired', false],
    ['pending', true, 'processing', 'expired', false],
    ['pending', true, 'awaiting_verification', 'expired', false],
    ['pending', true, 'failed', 'expired', false],
    ['expired', false, null, 'expired', false],
    ['expired', true, 'expired', 'expired', false],
    ['pending', false, 'expired', 'expired', false],
    // Canceled by the merchant: closed, also before expiry and with the failed transaction it left.
    ['canceled', false, null, 'canceled', false],
    ['canceled', false, 'failed', 'canceled', false],
    ['canceled', true, null, 'canceled', false],
  ];
  it.each(cases)('intent %s, past expiry %s, transaction %s -> %s (payable %s)', (intentStatus, pastExpiry, transactionStatus, status, payable) => {
    expect(checkoutState({ intentStatus, pastExpiry, transactionStatus })).toEqual({ status, payable });
  });
});
