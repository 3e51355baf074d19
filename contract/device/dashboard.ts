import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, currencySchema, meta, ok, timestampSchema } from '../common/index.ts';
import { transactionStatuses } from '../vocabulary.ts';
import { DEVICE_PATH_PREFIX } from './shared.ts';

const c = initContract();

export const dashboardSchema = z
  .object({
    today: z.object({
      date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).describe("Today's date in the brand's time zone."),
      timezone: z.string().describe('IANA time zone that defines "today" (the brand setting, UTC by default).'),
      revenue: amountSchema.describe("Sum of today's completed payments in `currency` (\"0.00\" when none)."),
      currency: currencySchema
        .nullable()
        .describe('Currency of `revenue`: the one most of today\'s completed payments used; null when there were none. Every currency is in `revenue_by_currency`.'),
      revenue_by_currency: z
        .array(z.object({ currency: currencySchema, amount: amountSchema }))
        .describe("Today's completed revenue per currency, by currency code."),
      total: z.number().int().min(0).describe('Transactions created today.'),
      pending: z.number().int().min(0).describe('Transactions created today that are still `pending`, `processing` or `awaiting_verification`.'),
    }),
    recent_transactions: z
      .array(
        z.object({
          trx_id: z.string(),
          amount: amountSchema,
          currency: currencySchema,
          status: z.enum(transactionStatuses),
          gateway: z.string().describe('Gateway code.'),
          created_at: timestampSchema,
        }),
      )
      .max(5)
      .describe("The brand's 5 most recent transactions, newest first."),
    unread_notifications: z.number().int().min(0).describe('Unread push notifications of this device.'),
    server_time: timestampSchema,
  })
  .meta({ id: 'DeviceDashboard' });

export const dashboardContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/dashboard',
      summary: 'Dashboard summary',
      description: "Today's completed revenue, today's transaction and pending counts, the 5 most recent transactions and the unread notification count. \"Today\" is the calendar day in the brand's time zone.",
      responses: { 200: ok(dashboardSchema) },
      metadata: meta({ auth: 'device', tag: 'Device dashboard' }),
    },
  },
  { pathPrefix: DEVICE_PATH_PREFIX, strictStatusCodes: true },
);
