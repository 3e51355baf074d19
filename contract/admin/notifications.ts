import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, idParam } from './shared.ts';

const c = initContract();

export const adminNotificationSchema = z
  .object({
    id: z.number().int(),
    device_id: z.number().int(),
    title: z.string(),
    body: z.string(),
    created_at: timestampSchema,
  })
  .meta({ id: 'AdminNotification' });

export const adminNotificationsContract = c.router(
  {
    send: {
      method: 'POST',
      path: '/devices/:device_id/notifications',
      summary: 'Send a push notification to a device',
      description: 'The device lists it with `GET /api/mobile/v1/notifications` until it acknowledges it. Do not put customer data in it.',
      pathParams: z.object({ device_id: idParam('device') }),
      body: z
        .strictObject({
          title: z.string().trim().min(1, 'title is required').max(200),
          body: z.string().trim().min(1, 'body is required').max(2000),
        })
        .meta({ id: 'AdminSendNotificationRequest' }),
      responses: { 201: ok(adminNotificationSchema) },
      metadata: adminMeta('Devices', ['DEVICE_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
