import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { getBrandFilterRules, updateFilterRulesAudited } from '../../../domain/settings/admin.ts';
import type { VersionedFilterRules } from '../../../domain/filter-rules/service.ts';
import { adminActor } from './actor.ts';

const s = initServer();

const rulesBody = (r: VersionedFilterRules) => ({
  version: r.version,
  updated_at: r.updatedAt.toISOString(),
  allowed_senders: r.allowedSenders,
  extra_senders: r.extraSenders,
  positive_keywords: r.positiveKeywords,
  negative_keywords: r.negativeKeywords,
  check_interval_hours: r.checkIntervalHours,
});

export const adminFilterRuleHandlers = s.router(contract.admin.filterRules, {
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: rulesBody(await getBrandFilterRules(req.db, params.brand_id)) } };
  },
  update: async ({ req, params, body }) => {
    const rules = await updateFilterRulesAudited(req.db, adminActor(req), params.brand_id, {
      extraSenders: body.extra_senders,
      positiveKeywords: body.positive_keywords,
      negativeKeywords: body.negative_keywords,
      checkIntervalHours: body.check_interval_hours,
    });
    return { status: 200, body: { success: true, data: rulesBody(rules) } };
  },
});
