import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { listAudit } from '../../../domain/audit/service.ts';
import { pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const adminAuditLogHandlers = s.router(contract.admin.auditLog, {
  list: async ({ req, query }) => {
    const { items, total } = await lagTolerant(req, (db) => listAudit(db, {
      page: query.page,
      perPage: query.per_page,
      brandId: query.brand_id,
      brandIds: brandScopeOf(req.principal),
      action: query.action,
      targetType: query.target_type,
      targetId: query.target_id,
    }));
    const data = items.map((e) => ({
      id: e.id,
      actor: e.actor,
      action: e.action,
      target_type: e.targetType,
      target_id: e.targetId,
      brand_id: e.brandId,
      before: e.before,
      after: e.after,
      request_id: e.requestId,
      created_at: e.createdAt.toISOString(),
    }));
    return { status: 200, body: { success: true, data, meta: pageMeta(query.page, query.per_page, total) } };
  },
});
