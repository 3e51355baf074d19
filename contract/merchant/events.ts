import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { intQuery, livemodeSchema, meta, timestampSchema } from '../common/index.ts';
import { webhookEventNameSchema } from '../events.ts';
import { webhookEventNames } from '../vocabulary.ts';

const c = initContract();

/** The longest a request may wait for a new event; under common proxy idle time-outs. */
export const MAX_EVENTS_WAIT_SECONDS = 25;

export const eventSchema = z
  .object({
    id: z.string().describe('Event id (`evt_…`): the body `id` and the `X-Webhook-Id` header of its deliveries.'),
    event: webhookEventNameSchema,
    created_at: timestampSchema,
    livemode: livemodeSchema,
    test: z.boolean().describe('A test event sent with a send-test-event route (no object changed).'),
    payload: z.string().describe('The webhook body exactly as delivered, byte for byte: what a delivery signs.'),
  })
  .meta({ id: 'Event' });

const cursorSchema = z.string().regex(/^(0|[1-9][0-9]{0,17})$/, 'Must be a cursor from `meta.next_cursor` (or 0)');

export const listEventsQuerySchema = z.strictObject({
  after: cursorSchema
    .optional()
    .describe('Only events after this cursor (`meta.next_cursor` of the previous answer). Without it: the most recent events, so a new listener starts at "now".'),
  limit: intQuery({ min: 1, max: 100, description: 'Events per answer, 1 to 100. Default 50.' }).optional().default(50),
  wait: intQuery({ min: 0, max: MAX_EVENTS_WAIT_SECONDS, description: `Long-poll: with \`after\`, wait up to this many seconds (0 to ${MAX_EVENTS_WAIT_SECONDS}) for an event when there is none yet. Default 0.` })
    .optional()
    .default(0),
  types: z
    .string()
    .regex(new RegExp(`^(${webhookEventNames.map((n) => n.replace('.', '\\.')).join('|')})(,(${webhookEventNames.map((n) => n.replace('.', '\\.')).join('|')}))*$`), 'Must be event names separated by commas')
    .meta({ examples: ['payment.completed,refund.completed'] })
    .optional()
    .describe('Only these events, comma separated (e.g. `payment.completed,refund.completed`).'),
});

export const eventsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/events',
      summary: 'Events (list and long-poll stream)',
      description:
        "The brand's events of the calling key's mode, oldest first, whether or not any endpoint received them. Page forward with `after=<meta.next_cursor>`; with `wait` the request is held until an event arrives or the wait ends (then an empty list and the same cursor). `npm run cli -- listen` uses this to forward events to a local URL.",
      query: listEventsQuerySchema,
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.array(eventSchema),
          meta: z.object({ next_cursor: z.string().describe('Pass as `after` to get the events after these.') }),
        }),
      },
      metadata: meta({ auth: 'merchant', tag: 'Webhooks', errors: [] }),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
