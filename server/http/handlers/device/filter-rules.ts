import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { getFilterRules } from '../../../domain/filter-rules/service.ts';
import { deviceOf } from '../../context.ts';

const s = initServer();

export const deviceFilterRulesHandlers = s.router(contract.device.filterRules, {
  get: async ({ req }) => {
    const rules = await getFilterRules(req.db, deviceOf(req).brandId);
    return {
      status: 200,
      body: {
        success: true,
        data: {
          version: rules.version,
          updated_at: rules.updatedAt.toISOString(),
          allowed_senders: rules.allowedSenders,
          positive_keywords: rules.positiveKeywords,
          negative_keywords: rules.negativeKeywords,
          check_interval_hours: rules.checkIntervalHours,
        },
      },
    };
  },
});
