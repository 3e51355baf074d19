import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok } from '../common/index.ts';
import { filterRulesSchema } from '../device/filter-rules.ts';

export const adminFilterRulesSchema = filterRulesSchema
  .extend({
    extra_senders: z.array(z.string()).describe("The admin's additions to the gateways' official senders (already included in `allowed_senders`)."),
  })
  .meta({ id: 'AdminSmsFilterRules' });
import { adminMeta, adminRouterOptions, idParam } from './shared.ts';

const c = initContract();

const ruleList = (what: string) =>
  z
    .array(z.string().max(64, 'Entries are at most 64 characters'))
    .max(100, 'At most 100 entries')
    .optional()
    .describe(`${what} Replaces the whole list; entries are trimmed and de-duplicated ignoring case.`);

export const updateFilterRulesBodySchema = z
  .strictObject({
    extra_senders: ruleList(
      "SMS senders the brand's phones may forward on top of the enabled gateways' official senders (names are printable ASCII, or phone numbers).",
    ),
    positive_keywords: ruleList('An SMS must contain one of these to be forwarded (empty: no such requirement).'),
    negative_keywords: ruleList('An SMS containing any of these is never forwarded (one-time codes, PINs).'),
    check_interval_hours: z.number().int('Must be a whole number of hours').min(1).max(168).optional().describe('How often the app re-fetches the rules.'),
  })
  .refine((b) => Object.keys(b).length > 0, 'Give at least one rule to change')
  .meta({ id: 'AdminUpdateFilterRulesRequest' });

const brandPath = z.object({ brand_id: idParam('brand') });

export const adminFilterRulesContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/brands/:brand_id/filter-rules',
      summary: "A brand's SMS filter rules",
      description: 'What the brand’s phones use to screen SMS before forwarding them (the defaults until changed).',
      pathParams: brandPath,
      responses: { 200: ok(adminFilterRulesSchema) },
      metadata: adminMeta('SMS filter rules', ['BRAND_NOT_FOUND']),
    },
    update: {
      method: 'PATCH',
      path: '/brands/:brand_id/filter-rules',
      summary: "Change a brand's SMS filter rules",
      description:
        "Changes the given lists only. The allowed senders are always the enabled gateways' official senders plus `extra_senders`. `version` goes up when anything actually changed (never otherwise), and also whenever a gateway's senders change or a gateway is enabled or disabled, so phones holding an older version fetch the new rules. Recorded in the audit log.",
      pathParams: brandPath,
      body: updateFilterRulesBodySchema,
      responses: { 200: ok(adminFilterRulesSchema) },
      metadata: adminMeta('SMS filter rules', ['BRAND_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
