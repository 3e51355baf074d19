import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { getAdminDevice, listAdminDevices, listPresenceHistory, revokeDeviceAudited } from '../../../domain/devices/admin.ts';
import { adminActor, pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const adminDeviceHandlers = s.router(contract.admin.devices, {
  list: async ({ req, query }) => {
    const { items, total } = await lagTolerant(req, (db) => listAdminDevices(db, { page: query.page, perPage: query.per_page, brandId: query.brand_id, brandIds: brandScopeOf(req.principal), mode: query.mode, presence: query.presence }));
    return { status: 200, body: { success: true, data: items, meta: pageMeta(query.page, query.per_page, total) } };
  },
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await getAdminDevice(req.db, params.device_id) } };
  },
  presenceHistory: async ({ req, params, query }) => {
    const { items, total } = await listPresenceHistory(req.db, params.device_id, { page: query.page, perPage: query.per_page });
    return { status: 200, body: { success: true, data: items, meta: pageMeta(query.page, query.per_page, total) } };
  },
  revoke: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await revokeDeviceAudited(req.db, adminActor(req), params.device_id) } };
  },
});
