import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, okList, pageMetaWithPagesSchema } from '../common/index.ts';
import { refundListQuerySchema, refundSchema } from '../merchant/refunds.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeField, modeFilter } from './shared.ts';

const c = initContract();

export const adminRefundSchema = refundSchema.extend({ brand_id: z.number().int(), mode: modeField }).meta({ id: 'AdminRefund' });

export const adminRefundListQuerySchema = z
  .strictObject({ ...refundListQuerySchema.shape, brand_id: brandFilter, mode: modeFilter })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'Must not be before `from`', path: ['to'] });

const refundPath = z.object({ refund_id: idParam('refund') });

export const failRefundBodySchema = z
  .strictObject({
    reason: z.string().trim().min(1, 'reason is required').max(500).describe('Shown to the merchant as `failure_reason`.'),
  })
  .meta({ id: 'AdminFailRefundRequest' });

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
        'For a refund paid out by hand: `pending` → `completed`, and the merchant gets `refund.completed`. Completing a completed refund changes nothing; a failed one is `INVALID_STATE`. Recorded in the audit log with the change, in one database transaction.',
      pathParams: refundPath,
      body: z.strictObject({}).optional().describe('No body (an empty object is accepted).'),
      responses: { 200: ok(adminRefundSchema) },
      metadata: adminMeta('Refunds', ['REFUND_NOT_FOUND', 'INVALID_STATE']),
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
