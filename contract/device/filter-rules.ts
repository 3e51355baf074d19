import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta, ok, timestampSchema } from '../common/index.ts';
import { DEVICE_PATH_PREFIX } from './shared.ts';

const c = initContract();

export const filterRulesSchema = z
  .object({
    version: z
      .number()
      .int()
      .min(1)
      .describe("Version of the rule set; only ever goes up: with every change to the brand's rules and whenever a gateway's senders change or a gateway is enabled or disabled. Re-apply the rules when it differs from the copy you hold."),
    updated_at: timestampSchema.describe('When the rules last changed.'),
    allowed_senders: z
      .array(z.string())
      .describe(
        "SMS senders that may be forwarded: the official senders of the enabled gateways plus the admin's additions. Names compare as ASCII ignoring case and nothing else (`bKash` = `BKASH`; a fullwidth or look-alike name equals nothing); numbers compare as E.164 (`01847-348685` = `+8801847348685`); short codes as digits. Empty: no sender (the brand has no enabled wallet gateway and no additions).",
      ),
    positive_keywords: z
      .array(z.string())
      .describe('An SMS is forwarded only when it contains at least one of these (empty list: no such requirement).'),
    negative_keywords: z
      .array(z.string())
      .describe(
        'An SMS containing any of these is never forwarded, whatever else it contains: one-time codes, PINs, passwords, verification codes (English and Bangla by default).',
      ),
    check_interval_hours: z.number().int().min(1).max(168).describe('How often the app should fetch the rules again, in hours.'),
  })
  .meta({
    id: 'SmsFilterRules',
    description:
      'Keywords match as whole words or phrases, case-insensitively; a space inside a phrase matches any whitespace. Letters, combining marks and digits on either side prevent a match, so `PIN` does not exclude "shopping".',
  });

export const filterRulesContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/config/filter-rules',
      summary: 'SMS filter rules',
      description: "The brand's rules for screening SMS on the phone before forwarding them, to protect customer privacy.",
      responses: { 200: ok(filterRulesSchema) },
      metadata: meta({ auth: 'device', tag: 'Device config' }),
    },
  },
  { pathPrefix: DEVICE_PATH_PREFIX, strictStatusCodes: true },
);
