import { z } from 'zod';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { deliverQueue } from './queue.ts';

/** Payload of a delivery wake-up: which delivery row to look at. */
export const deliverWebhookPayload = z.object({ deliveryId: z.number().int().positive() });

export function deliverWebhookRegistration(): JobRegistration {
  return { queue: deliverQueue };
}
