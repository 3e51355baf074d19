import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { getOverview } from '../../../domain/brands/overview.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const adminOverviewHandlers = s.router(contract.admin.overview, {
  get: async ({ req, query }) => {
    return { status: 200, body: { success: true, data: await lagTolerant(req, (db) => getOverview(db, { brandId: query.brand_id, mode: query.mode, brandIds: brandScopeOf(req.principal) })) } };
  },
});
