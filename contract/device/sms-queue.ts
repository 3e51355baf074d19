import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta, ok, timestampSchema } from '../common/index.ts';
import { DEVICE_PATH_PREFIX, idPathParam } from './shared.ts';
import { outboundSmsStatuses } from '../vocabulary.ts';

const c = initContract();

export const MAX_QUEUE_ITEMS_PER_READ = 20;

export const outboundSmsItemSchema = z
  .object({
    id: z.number().int().describe('Queue item id; report on it with `POST /sms/queues/{id}/reports`.'),
    phone: z.string().describe('Destination number, E.164.'),
    message: z.string().describe('Text to send.'),
    status: z.literal('pending').describe('Always `pending` here: waiting to be sent by this device.'),
    created_at: timestampSchema,
    lease_expires_at: timestampSchema.describe('Report before this time; after it the item may be handed to another device.'),
    expires_at: timestampSchema.describe('Do not send after this time; the item becomes `expired`.'),
  })
  .meta({ id: 'OutboundSmsQueueItem' });

export const outboundSmsStatusSchema = z
  .enum(outboundSmsStatuses)
  .describe('`pending` waiting, `leased` handed to a device, `sent`/`failed` as the device reported, `delivered` on a delivery report, `expired` past its time to live.');

export const outboundSmsReportRequestSchema = z
  .discriminatedUnion('status', [
    z.strictObject({ status: z.literal('sent') }),
    z.strictObject({
      status: z.literal('failed'),
      reason: z.string().trim().min(1, 'reason is required when status is failed').max(500).describe('Why sending failed (no SIM, no credit, radio off...).'),
    }),
    z.strictObject({ status: z.literal('delivered') }),
  ])
  .describe('`sent` once the SIM sent it, `failed` with a reason, `delivered` on a delivery report (also directly after `sent`).')
  .meta({ id: 'OutboundSmsReportRequest' });

export const outboundSmsStateSchema = z
  .object({
    id: z.number().int(),
    status: outboundSmsStatusSchema,
    sent_at: timestampSchema.nullable(),
    delivered_at: timestampSchema.nullable(),
    failed_at: timestampSchema.nullable(),
    failure_reason: z.string().nullable(),
    updated_at: timestampSchema,
  })
  .meta({ id: 'OutboundSmsState' });

export const smsQueueContract = c.router(
  {
    lease: {
      method: 'GET',
      path: '/sms/queues',
      summary: 'Outbound SMS to send',
      description: [
        `Up to ${MAX_QUEUE_ITEMS_PER_READ} outbound SMS of the brand waiting to be sent through this device's SIM (addressed to this device or to any device), oldest first.`,
        'Each returned item is leased to this device: no other device receives it while the lease runs (10 minutes).',
        'Report each with `POST /sms/queues/{id}/reports`; an item not reported in time goes back to the queue.',
      ].join(' '),
      responses: { 200: ok(z.array(outboundSmsItemSchema).max(MAX_QUEUE_ITEMS_PER_READ)) },
      metadata: meta({ auth: 'device', tag: 'Outbound SMS' }),
    },
    report: {
      method: 'POST',
      path: '/sms/queues/:id/reports',
      summary: 'Report on an outbound SMS',
      description:
        'Records `sent`, `failed` (with a reason) or `delivered` for an item this device holds or held last. Repeating a report answers the current state; a report that contradicts it (for example `delivered` after `failed`) is `INVALID_STATE`. An item that is not this device\'s is `SMS_QUEUE_ITEM_NOT_FOUND`.',
      pathParams: z.object({ id: idPathParam('outbound SMS queue item') }),
      body: outboundSmsReportRequestSchema,
      responses: { 200: ok(outboundSmsStateSchema) },
      metadata: meta({ auth: 'device', errors: ['SMS_QUEUE_ITEM_NOT_FOUND', 'INVALID_STATE'], tag: 'Outbound SMS' }),
    },
  },
  { pathPrefix: DEVICE_PATH_PREFIX, strictStatusCodes: true },
);
