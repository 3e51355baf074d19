import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { dateQuery, modeSchema, ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema } from '../common/index.ts';
import { webhookEventNameSchema } from '../events.ts';
import { webhookAttemptSchema, webhookDeliverySchema } from '../merchant/webhooks.ts';
import { deliveryStatuses } from '../vocabulary.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeField, modeFilter } from './shared.ts';

const c = initContract();

export const adminDeliverySchema = webhookDeliverySchema
  .extend({
    brand_id: z.number().int(),
    mode: modeField,
    dead_lettered_at: timestampSchema.nullable().describe('When it became a dead letter; null otherwise.'),
  })
  .meta({ id: 'AdminWebhookDelivery' });

export const adminDeliveryDetailSchema = adminDeliverySchema
  .extend({ attempt_log: z.array(webhookAttemptSchema).describe('Every attempt, oldest first.') })
  .meta({ id: 'AdminWebhookDeliveryDetail' });

export const deliveryListQuerySchema = z
  .strictObject({
    ...pageQuerySchema.shape,
    brand_id: brandFilter,
    mode: modeFilter,
    status: z.enum(deliveryStatuses).optional().describe('Only deliveries in this status (`dead_letter` for the ones to replay).'),
    event: webhookEventNameSchema.optional().describe('Only deliveries of this event.'),
    from: dateQuery('Created on or after this UTC date (YYYY-MM-DD, inclusive).').optional(),
    to: dateQuery('Created on or before this UTC date (YYYY-MM-DD, inclusive).').optional(),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'Must not be before `from`', path: ['to'] });

export const replayDeadLettersBodySchema = z
  .strictObject({
    since: z.iso
      .datetime({ offset: true, error: 'Must be an ISO 8601 timestamp, e.g. 2026-11-21T10:00:00Z' })
      .describe('Replay every delivery that became a dead letter at or after this time.'),
    brand_id: z.number().int().min(1).optional().describe("Only this brand's dead letters."),
  })
  .meta({ id: 'AdminReplayDeadLettersRequest' });

export const replayDeadLettersResultSchema = z
  .object({
    replayed: z.number().int().describe('Dead letters put back to `pending` (same delivery ids and event ids; attempts keep counting).'),
    skipped_disabled: z.number().int().describe('Dead letters left alone because their endpoint is disabled: enable it first.'),
  })
  .meta({ id: 'AdminReplayDeadLettersResult' });

export const adminSendTestEventBodySchema = z
  .strictObject({
    brand_id: z.number().int().min(1).describe("The brand whose endpoint receives it."),
    event: webhookEventNameSchema.describe('Which event to send, with a realistic sample `data` body.'),
    mode: modeSchema.optional().describe('`livemode` of the event body. Default `test`.'),
  })
  .meta({ id: 'AdminSendWebhookTestRequest' });

const deliveryPath = z.object({ delivery_id: idParam('delivery') });

export const adminWebhookDeliveriesContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/webhook-deliveries',
      summary: 'List webhook deliveries',
      description: 'Every brand’s deliveries (or one brand’s), newest first, with filters.',
      query: deliveryListQuerySchema,
      responses: { 200: okList(adminDeliverySchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Webhook deliveries'),
    },
    get: {
      method: 'GET',
      path: '/webhook-deliveries/:delivery_id',
      summary: 'Get a delivery with every attempt',
      description: 'One delivery with its payload and `attempt_log`: every attempt made, oldest first.',
      pathParams: deliveryPath,
      responses: { 200: ok(adminDeliveryDetailSchema) },
      metadata: adminMeta('Webhook deliveries', ['DELIVERY_NOT_FOUND']),
    },
    replay: {
      method: 'POST',
      path: '/webhook-deliveries/:delivery_id/replays',
      summary: 'Replay a dead letter',
      description:
        'Puts a `dead_letter` delivery back to `pending`, due now, keeping its id, event id (`X-Webhook-Id`) and body; attempts keep counting. `INVALID_STATE` when it is not a dead letter or its endpoint is disabled. Recorded in the audit log.',
      pathParams: deliveryPath,
      body: z.strictObject({}).optional().describe('No body (an empty object is accepted).'),
      responses: { 200: ok(adminDeliverySchema) },
      metadata: adminMeta('Webhook deliveries', ['DELIVERY_NOT_FOUND', 'INVALID_STATE']),
    },
    sendTest: {
      method: 'POST',
      path: '/webhook-tests',
      summary: "Send a test event to a brand's endpoint",
      description:
        'What `POST /api/v1/webhooks/tests` does for the merchant: a signed sample event, delivered and logged like any other, changing nothing else. `WEBHOOK_ENDPOINT_NOT_FOUND` when the brand has no endpoint, `INVALID_STATE` when it is disabled. Recorded in the audit log.',
      body: adminSendTestEventBodySchema,
      responses: { 201: ok(adminDeliverySchema) },
      metadata: adminMeta('Webhook deliveries', ['BRAND_NOT_FOUND', 'WEBHOOK_ENDPOINT_NOT_FOUND', 'INVALID_STATE']),
    },
    replayDeadLetters: {
      method: 'POST',
      path: '/webhook-deliveries/dead-letter-replays',
      summary: 'Replay every dead letter since a time',
      description: 'Like replaying each one (up to 1000 per call: call again while `replayed` is 1000). Recorded in the audit log as one row with the counts.',
      body: replayDeadLettersBodySchema,
      responses: { 200: ok(replayDeadLettersResultSchema) },
      metadata: adminMeta('Webhook deliveries', ['BRAND_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
