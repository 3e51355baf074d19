import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, currencySchema, okList, pageMetaWithPagesSchema, timestampSchema, uuidSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, brandFilter, modeField, modeFilter } from './shared.ts';

const c = initContract();

export const adminUnpaidPaymentSchema = z
  .object({
    payment_id: uuidSchema.describe('The payment id (the intent’s UUID), as the merchant got it.'),
    brand_id: z.number().int(),
    mode: modeField,
    amount: amountSchema,
    currency: currencySchema,
    reference: z.string().nullable().describe("The merchant's own reference."),
    status: z.enum(['pending', 'expired', 'canceled']).describe('`pending` while the customer can still pay, else `expired` or `canceled`.'),
    created_at: timestampSchema,
    expires_at: timestampSchema,
  })
  .meta({ id: 'AdminUnpaidPayment' });

export const adminPaymentsContract = c.router(
  {
    listUnpaid: {
      method: 'GET',
      path: '/payments/unpaid',
      summary: 'Find payments with no transaction yet',
      description:
        'Payments (intents) the customer has not started paying: no transaction exists, so `GET /transactions` cannot show them. Found by the payment id or the merchant’s reference (exact), newest first, at most 20.',
      query: z.strictObject({
        reference: z.string().trim().min(1).max(100).describe('The payment id (UUID) or the merchant’s own reference.'),
        brand_id: brandFilter,
        mode: modeFilter,
      }),
      responses: { 200: okList(adminUnpaidPaymentSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Transactions'),
    },
  },
  adminRouterOptions,
);
