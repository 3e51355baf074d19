import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { deviceSmsCompleteness, listSmsCompleteness, type CompletenessView } from '../../../domain/recovery/sequences/service.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const completenessJson = (v: CompletenessView) => ({
  device_id: v.deviceId,
  verdict: v.verdict,
  since: v.since.toISOString(),
  highest: v.highest,
  missing_count: v.missingCount,
  screened_count: v.screenedCount,
  counters: v.counters.map((c) => ({
    sim_slot: c.simSlot,
    sequence_epoch: c.epoch,
    highest: c.highest,
    forwarded_count: c.forwardedCount,
    screened_count: c.screenedCount,
    missing_count: c.missingCount,
    missing: c.missing,
    first_seen_at: c.firstSeenAt.toISOString(),
    last_seen_at: c.lastSeenAt.toISOString(),
  })),
});

export const adminSmsCompletenessHandlers = s.router(contract.admin.smsCompleteness, {
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: completenessJson(await deviceSmsCompleteness(req.db, params.device_id)) } };
  },
  list: async ({ req, query }) => {
    const views = await lagTolerant(req, (db) => listSmsCompleteness(db, { brandId: query.brand_id, brandIds: brandScopeOf(req.principal), mode: query.mode }));
    return { status: 200, body: { success: true, data: views.map(completenessJson) } };
  },
});
