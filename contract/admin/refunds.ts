import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, okList, pageMetaWithPagesSchema } from '../common/index.ts';
import { refundListQuerySchema, refundSchema } from '../merchant/refunds.ts';
import { gatewayTypes } from '../vocabulary.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeField, modeFilter } from './shared.ts';

const c = initContract();

export const adminRefundSchema = refundSchema
  .extend({
    brand_id: z.number().int(),
    mode: modeField,
    gateway_type: z
      .enum(gatewayTypes)
      .describe('Type of the refunded transaction’s gateway: a `manual` one’s refunds are paid out by a person, who completes them with the wallet reference.'),
    completion_reference: z
      .string()
      .nullable()
      .describe('The wallet’s transaction id of the money sent back, as the operator gave it on completing by hand; null otherwise.'),
    completion_note: z.string().nullable().describe('The operator’s note given on completing by hand; null when none was given.'),
  })
  .meta({ id: 'AdminRefund' });

export const adminRefundListQuerySchema = z
  .strictObject({ ...refundListQuerySchema.shape, brand_id: brandFilter, mode: modeFilter })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'Must not be before `from`', path: ['to'] });

const refundPath = z.object({ refund_id: idParam('refund') });

export const failRefundBodySchema = z
  .strictObject({
    reason: z.string().trim().min(1, 'reason is required').max(500).describe('Shown to the merchant as `failure_reason`.'),
  })
  .meta({ id: 'AdminFailRefundRequest' });

export const completeRefundBodySchema = z
  .strictObject({
    reference: z
      .string()
      .trim()
      .min(1, 'reference must not be empty')
      .max(100)
      .optional()
      .describe(
        'The wallet’s transaction id of the money sent back to the customer (kept as `completion_reference`). Required for a refund of a `manual` gateway (`VALIDATION_ERROR` on `reference` without it); optional otherwise.',
      ),
    note: z.string().trim().max(500).optional().describe('Free text for the record (kept as `completion_note`); an empty note is none.'),
  })
  .meta({ id: 'AdminCompleteRefundRequest' });

export const adminRefundsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/refunds',
      summary: 'List refunds',
      description: 'Every brand’s refunds (or one brand’s), newest first. Manual-gateway refunds wait here as `pending` until an admin completes or fails them.',
      query: adminRefundListQuerySchema,
      responses: { 200: okList(adminRefundSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Refunds'),
    },
    get: {
      method: 'GET',
      path: '/refunds/:refund_id',
      summary: 'Get a refund',
      description: 'One refund of any brand by its numeric id, with its brand, mode and the transaction it refunds (`transaction_id`, `trx_id`).',
      pathParams: refundPath,
      responses: { 200: ok(adminRefundSchema) },
      metadata: adminMeta('Refunds', ['REFUND_NOT_FOUND']),
    },
    complete: {
      method: 'POST',
      path: '/refunds/:refund_id/completions',
      summary: 'Mark a refund as done',
      description:
        'For a refund paid out by hand: `pending` → `completed`, and the merchant gets `refund.completed`. The operator gives the wallet reference of the money sent back (required for a `manual` gateway) and an optional note; both are kept on the refund and in the audit entry. Completing a completed refund changes nothing (the first reference and note stay); a failed one is `INVALID_STATE`. Recorded in the audit log with the change, in one database transaction.',
      pathParams: refundPath,
      body: completeRefundBodySchema.optional().describe('The wallet reference and a note; may be omitted only for a refund of an `automatic` gateway.'),
      responses: { 200: ok(adminRefundSchema) },
      metadata: adminMeta('Refunds', ['REFUND_NOT_FOUND', 'INVALID_STATE', 'VALIDATION_ERROR']),
    },
    fail: {
      method: 'POST',
      path: '/refunds/:refund_id/failures',
      summary: 'Mark a refund as failed',
      description:
        '`pending` → `failed`, and the merchant gets `refund.failed`; the amount becomes refundable again. Failing a failed refund changes nothing; a completed one is `INVALID_STATE`. Recorded in the audit log with the change, in one database transaction.',
      pathParams: refundPath,
      body: failRefundBodySchema,
      responses: { 200: ok(adminRefundSchema) },
      metadata: adminMeta('Refunds', ['REFUND_NOT_FOUND', 'INVALID_STATE']),
    },
  },
  adminRouterOptions,
);
