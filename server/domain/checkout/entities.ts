import { defineEntity, p } from '@mikro-orm/core';
import { PaymentIntent } from '../payments/entities.ts';

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

