import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { listAlerts } from '../../../domain/alerts/list.ts';
import { getAlertSettings, putAlertSettings } from '../../../domain/alerts/settings.ts';
import { adminActor, pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const adminAlertsHandlers = s.router(contract.admin.alerts, {
  list: async ({ req, query }) => {
    const { rows, total } = await lagTolerant(req, (db) => listAlerts(db, { page: query.page, perPage: query.per_page, brandId: query.brand_id, brandIds: brandScopeOf(req.principal), type: query.type, status: query.status }));
    const data = rows.map((r) => ({
      id: r.id,
      brand_id: r.brand_id,
      type: r.type,
      subject: r.subject,
      details: r.details,
      status: r.status,
      attempts: r.attempts,
      last_error: r.last_error,
      delivered_at: r.delivered_at?.toISOString() ?? null,
      created_at: r.created_at.toISOString(),
    }));
    return { status: 200, body: { success: true, data, meta: pageMeta(query.page, query.per_page, total) } };
  },
  getSettings: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await getAlertSettings(req.db, params.brand_id) } };
  },
  putSettings: async ({ req, params, body }) => {
    return { status: 200, body: { success: true, data: await putAlertSettings(req.db, adminActor(req), params.brand_id, body.disabled_types) } };
  },
});
