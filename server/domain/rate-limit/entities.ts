import { defineEntity, p } from '@mikro-orm/core';

/**
 * One fixed window's counter of one bucket (queries.ts). The table is UNLOGGED
 * (migration 0008): counters are worth nothing after a crash, and not logging
 * them keeps every counted request cheap.
 */
export const RateLimit = defineEntity({
  name: 'RateLimit',
  tableName: 'rate_limits',
  properties: {
    bucket: p.string().length(100).primary(),
    windowStart: p.datetime().primary(),
    hits: p.integer(),
    expiresAt: p.datetime(),
  },
  indexes: [{ name: 'rate_limits_expires_at_idx', properties: ['expiresAt'] }],
  checks: [{ name: 'rate_limits_hits_check', expression: 'hits >= 0' }],
});
