import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeFilter } from './shared.ts';

const c = initContract();

export const smsSequenceCounterSchema = z
  .object({
    sim_slot: z.number().int().nullable().describe('SIM slot of the counter; null: SMS whose slot the phone does not know.'),
    sequence_epoch: z.string().describe('The epoch the app named (`default` when it sends none); a reinstall starts a new one.'),
    highest: z.number().int().describe('Highest number seen.'),
    forwarded_count: z.number().int().describe('Numbers whose SMS the service received.'),
    screened_count: z.number().int().describe('Numbers screened out by the filter rules (on the phone or by the service).'),
    missing_count: z.number().int().describe('Numbers from 1 to `highest` neither forwarded nor screened.'),
    missing: z.array(z.number().int()).describe('The missing numbers, ascending (at most 200 listed).'),
    first_seen_at: timestampSchema,
    last_seen_at: timestampSchema.describe('Last request that carried a number of this counter.'),
  })
  .meta({ id: 'AdminSmsSequenceCounter' });

export const smsCompletenessSchema = z
  .object({
    device_id: z.number().int(),
    verdict: z
      .enum(['complete', 'missing', 'unknown'])
      .describe(
        '`complete`: every number of the counters active in the last 24 hours, from 1 to their highest, was forwarded or screened; `missing`: some were not (asked back with a `sequence_gap` backfill, see `missing`); `unknown`: the phone never sent sequence numbers, so nothing can be proven.',
      ),
    since: timestampSchema.describe('Start of the 24 hours looked at.'),
    highest: z.number().int().nullable().describe('Highest number of the counters active in the window; null when none.'),
    missing_count: z.number().int(),
    screened_count: z.number().int(),
    counters: z.array(smsSequenceCounterSchema).describe('The counters (per SIM slot and epoch) that numbered an SMS in the last 24 hours.'),
  })
  .meta({ id: 'AdminSmsCompleteness' });

export const adminSmsCompletenessContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/devices/:device_id/sms-completeness',
      summary: "Whether a phone's SMS are complete",
      description:
        "Over the last 24 hours, per SIM counter: the highest sequence number, the numbers missing (neither forwarded nor screened out) and the screened count, and the verdict. With the balance chain this proves nothing was missed (docs/recovery.md, \"Sequence numbers\").",
      pathParams: z.object({ device_id: idParam('device') }),
      responses: { 200: ok(smsCompletenessSchema) },
      metadata: adminMeta('Devices', ['DEVICE_NOT_FOUND']),
    },
    list: {
      method: 'GET',
      path: '/phones/sms-completeness',
      summary: 'SMS completeness of every phone',
      description: 'The completeness of every active (not revoked) phone the caller may see, by device id: what the overview shows per phone.',
      query: z.strictObject({ brand_id: brandFilter, mode: modeFilter }),
      responses: { 200: ok(z.array(smsCompletenessSchema)) },
      metadata: adminMeta('Devices'),
    },
  },
  adminRouterOptions,
);
