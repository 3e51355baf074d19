import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  amountInputSchema,
  amountSchema,
  currencySchema,
  dateQuery,
  intQuery,
  livemodeSchema,
  meta,
  ok,
  okList,
  pageMetaWithPagesSchema,
  pageQuerySchema,
  timestampSchema,
  uuidSchema,
} from '../common/index.ts';
import { refundStatuses } from '../vocabulary.ts';

const c = initContract();

export const refundSchema = z
  .object({
    id: z.number().int().describe('Numeric id of the refund.'),
    uuid: uuidSchema.describe("The refund's public id (UUID)."),
    transaction_id: z.number().int().describe('Numeric id of the refunded transaction: the `transaction_id` of the payment lookup.'),
    trx_id: z.string().describe('Service reference of the refunded transaction.'),
    gateway_trx_id: z.string().nullable().describe("The refunded transaction's gateway reference."),
    amount: amountSchema,
    currency: currencySchema.describe("The refunded transaction's currency."),
    reason: z.string().nullable().describe('Free text given when the refund was requested.'),
    status: z.enum(refundStatuses).describe('`pending` until processed, then `completed` or `failed`.'),
    failure_reason: z.string().nullable().describe('Why the refund failed, when it did.'),
    processed_at: timestampSchema.nullable().describe('When the refund completed or failed; null while pending.'),
    created_at: timestampSchema,
    livemode: livemodeSchema,
  })
  .meta({ id: 'Refund' });

export const createRefundBodySchema = z
  .strictObject({
    trx_id: z.string().trim().min(1).max(100).optional().describe('Service (or gateway) reference of a completed transaction. Give this or `payment_id`.'),
    payment_id: uuidSchema
      .optional()
      .describe('The payment id (UUID) of a completed payment, as `POST /api/v1/payments` returned it: its completed transaction is refunded. Give this or `trx_id`.'),
    amount: amountInputSchema.describe('Amount to refund, in the transaction currency; at most what is left after earlier non-failed refunds.'),
    reason: z.string().trim().max(500).optional().describe('Free text.'),
  })
  .refine((b) => b.trx_id !== undefined || b.payment_id !== undefined, { message: 'Give trx_id or payment_id', path: ['trx_id'] })
  .refine((b) => b.trx_id === undefined || b.payment_id === undefined, { message: 'Give trx_id or payment_id, not both', path: ['payment_id'] })
  // A whole example: one generated member by member would give both trx_id and payment_id, which is refused.
  .meta({ id: 'CreateRefundRequest', examples: [{ payment_id: '3f2b8c1e-6a4d-4e7b-9c2a-1d5e8f7a6b30', amount: '250.00', reason: 'Customer returned one item' }] });

export const refundListQuerySchema = z
  .strictObject({
    ...pageQuerySchema.shape,
    status: z.enum(refundStatuses).optional().describe('Only refunds in this status.'),
    trx_id: z.string().min(1).max(100).optional().describe('Only refunds of the transaction with this service (or gateway) reference.'),
    transaction_id: intQuery({ min: 1, description: 'Only refunds of the transaction with this internal id.' }).optional(),
    from: dateQuery('Created on or after this UTC date (YYYY-MM-DD, inclusive).').optional(),
    to: dateQuery('Created on or before this UTC date (YYYY-MM-DD, inclusive).').optional(),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'Must not be before `from`', path: ['to'] });

export const refundsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/refunds',
      summary: 'Refund a transaction',
      description:
        'Creates a `pending` refund of a completed transaction, named by its `trx_id` or by the `payment_id` of its payment (exactly one of them). The sum of its non-failed refunds never exceeds its amount, also when requests race. Honours `Idempotency-Key`.',
      body: createRefundBodySchema,
      responses: { 201: ok(refundSchema) },
      metadata: meta({
        auth: 'merchant',
        tag: 'Refunds',
        scope: 'refunds',
        idempotent: true,
        errors: ['PAYMENT_NOT_FOUND', 'TRANSACTION_NOT_REFUNDABLE', 'REFUND_EXCEEDS_AVAILABLE', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS'],
      }),
    },
    list: {
      method: 'GET',
      path: '/refunds',
      summary: 'List refunds',
      description: 'Refunds of the calling brand, newest first. Out-of-range or malformed filters are a 400 naming the parameter.',
      query: refundListQuerySchema,
      responses: { 200: okList(refundSchema, pageMetaWithPagesSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Refunds' }),
    },
    get: {
      method: 'GET',
      path: '/refunds/:trx_id',
      summary: 'Latest refund of a transaction',
      description:
        "The latest refund of the transaction with this service or gateway reference. Unknown transaction (or another brand's): `PAYMENT_NOT_FOUND`; a transaction without refunds: `REFUND_NOT_FOUND`.",
      pathParams: z.object({ trx_id: z.string().describe('Service transaction reference or gateway transaction reference.') }),
      responses: { 200: ok(refundSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Refunds', errors: ['PAYMENT_NOT_FOUND', 'REFUND_NOT_FOUND'] }),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
