import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta, ok, timestampSchema } from '../common/index.ts';
import { DEVICE_PATH_PREFIX } from './shared.ts';

const c = initContract();

/** Most ids one acknowledgement takes. */
export const MAX_ACKNOWLEDGED_IDS = 100;

export const notificationSchema = z
  .object({
    id: z.number().int().describe('Notification id; acknowledge with it.'),
    title: z.string(),
    body: z.string(),
    created_at: timestampSchema,
  })
  .meta({ id: 'DeviceNotification' });

export const acknowledgementRequestSchema = z
  .strictObject({
    ids: z
      .array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER))
      .min(1, 'ids must contain at least one id')
      .max(MAX_ACKNOWLEDGED_IDS, `At most ${MAX_ACKNOWLEDGED_IDS} ids per call`)
      .describe(`Ids of notifications to mark as read, 1 to ${MAX_ACKNOWLEDGED_IDS}. Repeated ids count once.`),
  })
  .meta({ id: 'NotificationAcknowledgementRequest' });

export const acknowledgementSchema = z
  .object({
    acknowledged: z
      .number()
      .int()
      .min(0)
      .describe("How many notifications this call marked as read. Ids of other devices, unknown ids and notifications already read are not touched and not counted."),
  })
  .meta({ id: 'NotificationAcknowledgement' });

export const notificationsContract = c.router(
  {
    listUnread: {
      method: 'GET',
      path: '/notifications',
      summary: 'Unread notifications',
      description: 'Unread push notifications of the calling device, newest first, at most 100.',
      responses: { 200: ok(z.array(notificationSchema)) },
      metadata: meta({ auth: 'device', tag: 'Device notifications' }),
    },
    acknowledge: {
      method: 'POST',
      path: '/notifications/acknowledgements',
      summary: 'Acknowledge notifications',
      description:
        "Marks notifications of the calling device as read. Scoped to the device: another device's ids are neither changed nor counted, and are not reported as errors either (the answer does not reveal whether they exist).",
      body: acknowledgementRequestSchema,
      responses: { 200: ok(acknowledgementSchema) },
      metadata: meta({ auth: 'device', tag: 'Device notifications' }),
    },
  },
  { pathPrefix: DEVICE_PATH_PREFIX, strictStatusCodes: true },
);
