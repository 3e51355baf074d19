import type { Request } from 'express';
import { ADMIN_ACTOR_HEADER } from '../../../../contract/admin/shared.ts';
import type { AuditActor } from '../../../domain/audit/service.ts';
import { operatorActor } from '../../../domain/operators/lockout.ts';

/**
 * Who the audit log names for this request: a console operator as
 * `operator:<uuid> <email>` (the `X-Admin-Actor` label is ignored: the session
 * already says who it is); the admin token, one shared credential, as `admin`
 * or `admin:<label>` from the optional `X-Admin-Actor` (checked by the contract).
 */
export function adminActor(req: Express.Request & Pick<Request, 'get'>): AuditActor {
  if (req.principal.kind !== 'admin') throw new Error('route is not an admin route');
  const op = req.principal.operator;
  if (op) return operatorActor(op, req.requestId);
  const label = req.get(ADMIN_ACTOR_HEADER);
  return { actor: label ? `admin:${label}` : 'admin', requestId: req.requestId };
}

/** `meta` of a paginated admin list. */
export function pageMeta(page: number, perPage: number, total: number) {
  return { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) };
}
