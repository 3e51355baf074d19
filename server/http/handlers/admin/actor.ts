import type { Request } from 'express';
import { ADMIN_ACTOR_HEADER } from '../../../../contract/admin/shared.ts';
import type { AuditActor } from '../../../domain/audit/service.ts';

/**
 * Who the audit log names for this request. The admin token is one shared
 * credential; the optional `X-Admin-Actor` label (checked by the contract) says
 * which operator or tool used it.
 */
export function adminActor(req: Express.Request & Pick<Request, 'get'>): AuditActor {
  if (req.principal.kind !== 'admin') throw new Error('route is not an admin route');
  const label = req.get(ADMIN_ACTOR_HEADER);
  return { actor: label ? `admin:${label}` : 'admin', requestId: req.requestId };
}

/** `meta` of a paginated admin list. */
export function pageMeta(page: number, perPage: number, total: number) {
  return { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) };
}
