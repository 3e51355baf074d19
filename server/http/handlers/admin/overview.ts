import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { getOverview } from '../../../domain/brands/overview.ts';
import { brandScopeOf } from '../../brand-scope.ts';

const s = initServer();

export const adminOverviewHandlers = s.router(contract.admin.overview, {
  get: async ({ req, query }) => {
    return { status: 200, body: { success: true, data: await getOverview(req.db, { brandId: query.brand_id, mode: query.mode, brandIds: brandScopeOf(req.principal) }) } };
  },
});
