import { defineEntity, p } from '@mikro-orm/core';
import { PaymentIntent } from '../payments/entities.ts';
import { Gateway } from '../gateways/entities.ts';
import { WalletAccount } from '../wallet-accounts/entities.ts';

/**
 * Per payment: how many times the checkout replaced a mistyped gateway
 * transaction id and answered "already taken" (limits.ts). Deleted with its
 * intent. Mirrors migration 0012.
 */
export const CheckoutSubmissionCount = defineEntity({
  name: 'CheckoutSubmissionCount',
  tableName: 'checkout_submission_counts',
  properties: {
    intent: () =>
      p.oneToOne(PaymentIntent).owner().primary().foreignKeyName('checkout_submission_counts_intent_id_fkey').deleteRule('cascade').updateRule('no action'),
    replacements: p.integer().default(0).check('replacements >= 0'),
    takenAnswers: p.integer().default(0).check('taken_answers >= 0'),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});


/**
 * The wallet account a payment's checkout showed for a gateway
 * (wallet-accounts/assign.ts): chosen once, when the page first offers the
 * gateway, and kept (the customer may already have sent money to it). The
 * transaction started on that gateway records the same account.
 */
export const CheckoutAccountAssignment = defineEntity({
  name: 'CheckoutAccountAssignment',
  tableName: 'checkout_account_assignments',
  properties: {
    intent: () => p.manyToOne(PaymentIntent).primary().foreignKeyName('checkout_account_assignments_intent_id_fkey').deleteRule('cascade').updateRule('no action'),
    gateway: () => p.manyToOne(Gateway).primary().foreignKeyName('checkout_account_assignments_gateway_id_fkey').deleteRule('cascade'),
    account: () => p.manyToOne(WalletAccount).foreignKeyName('checkout_account_assignments_account_id_fkey').deleteRule('cascade'),
    assignedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'checkout_account_assignments_account_idx', properties: ['account'] }],
});
