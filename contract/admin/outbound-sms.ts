import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, idParam } from './shared.ts';

const c = initContract();

export const outboundSmsQueuedSchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    device_id: z.number().int().nullable().describe('The one device that may send it, or null for any device of the brand.'),
    status: z.literal('pending'),
    expires_at: timestampSchema.describe('Not sent by then: it becomes `expired`.'),
  })
  .meta({ id: 'AdminOutboundSmsQueued' });

export const enqueueOutboundSmsBodySchema = z
  .strictObject({
    phone: z.string().trim().min(1, 'phone is required').max(32).describe('Destination, E.164 or national (Bangladesh by default). Stored encrypted.'),
    message: z.string().trim().min(1, 'message is required').max(1000).describe('Text to send. Stored encrypted.'),
    device_id: z.number().int().min(1).optional().describe("Only this device of the brand may send it; default any of the brand's devices."),
    ttl_minutes: z.number().int('Must be a whole number of minutes').min(1).max(10_080).optional().describe('Minutes it may wait to be sent, 1 to 10080. Default 1440 (24 hours).'),
  })
  .meta({ id: 'AdminEnqueueOutboundSmsRequest' });

export const adminOutboundSmsContract = c.router(
  {
    enqueue: {
      method: 'POST',
      path: '/brands/:brand_id/outbound-sms',
      summary: 'Queue an SMS for a brand’s phones to send',
      description:
        'The next phone of the brand (or the given device) that polls `GET /api/mobile/v1/sms/queues` receives it and sends it through its SIM. Two phones polling at once never both get it. Recorded in the audit log (without the number or text).',
      pathParams: z.object({ brand_id: idParam('brand') }),
      body: enqueueOutboundSmsBodySchema,
      responses: { 201: ok(outboundSmsQueuedSchema) },
      metadata: adminMeta('Devices', ['BRAND_NOT_FOUND', 'DEVICE_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
