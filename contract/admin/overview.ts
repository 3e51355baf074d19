import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, currencySchema, ok, timestampSchema } from '../common/index.ts';
import { modeSchema } from '../common/mode.ts';
import { adminMeta, adminRouterOptions, brandFilter } from './shared.ts';
import { brandStatuses } from '../vocabulary.ts';

const c = initContract();

export const brandOverviewSchema = z
  .object({
    brand_id: z.number().int(),
    brand_name: z.string(),
    brand_status: z.enum(brandStatuses),
    timezone: z.string().describe("The time zone the brand's day is counted in (UTC when the stored one is unknown)."),
    date: z.string().describe("Today in the brand's time zone, `YYYY-MM-DD`."),
    revenue: z
      .array(z.object({ currency: currencySchema, amount: amountSchema, count: z.number().int() }))
      .describe('Transactions completed today, summed per currency (amounts of different currencies are never added).'),
    transactions_created: z.number().int().describe('Transactions started today.'),
    review: z
      .object({
        transactions: z.number().int().describe('Transactions in `awaiting_verification` (any day).'),
        sms_records: z.number().int().describe('SMS records waiting for a person (`needs_review`), any day.'),
        oldest_waiting_since: timestampSchema.nullable().describe('When the oldest of them started waiting.'),
      })
      .describe('What waits for a person now: the review queue.'),
    waiting_by_mode: z
      .object({
        live: z.number().int().describe('Live transactions awaiting verification plus live SMS records waiting for review.'),
        test: z.number().int().describe('The same in test mode.'),
      })
      .describe(
        'The review queue of both modes, whatever `mode` asks: the console shows it on its mode switch and opens in the mode where work waits, so work in the other mode is never hidden.',
      ),
    devices: z.object({
      online: z.number().int(),
      offline: z.number().int(),
      low_battery: z.number().int().describe('Not revoked, battery at or below the `battery_low_percent` setting and not charging.'),
      last_heartbeat_at: timestampSchema.nullable().describe('The most recent heartbeat of any of its devices.'),
    }),
    webhooks: z.object({
      dead_letters: z.number().int().describe('Deliveries that gave up and wait for a replay.'),
      retrying: z.number().int().describe('Deliveries failing now and being retried.'),
      delivered_24h: z.number().int().describe('Deliveries that succeeded in the last 24 hours.'),
      endpoints_disabled: z.number().int().describe('Endpoints turned off because they failed or are gone (not the merchant’s own switch).'),
    }),
  })
  .meta({ id: 'AdminBrandOverview' });

export const adminOverviewContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/overview',
      summary: 'Today, per brand',
      description:
        "Per brand, in one read: today's revenue per currency and transactions started (the brand's own day), what waits in the review queue (and, in `waiting_by_mode`, what waits in each mode), its devices online, offline and low on battery with the last heartbeat, and its webhook health. Figures of one mode (default `live`). Ordered by brand id.",
      query: z.strictObject({ brand_id: brandFilter, mode: modeSchema.default('live').describe('Figures of this mode; default `live`.') }),
      responses: { 200: ok(z.array(brandOverviewSchema)) },
      metadata: adminMeta('Overview'),
    },
  },
  adminRouterOptions,
);
