import type { Request, RequestHandler } from 'express';
import { AppError, type ErrorCode } from '../../contract/common/errors.ts';
import type { Db } from '../domain/db.ts';
import { brandOfOwned, type OwnedKind } from '../domain/brands/scope.ts';
import type { Principal } from './context.ts';

/** The brands an admin caller may see; null: every brand (the admin token, owners, unscoped operators). */
export function brandScopeOf(principal: Principal): number[] | null {
  return principal.kind === 'admin' ? principal.brandIds : null;
}

export function inScope(scope: number[] | null, brandId: number | null | undefined): boolean {
  return scope === null || (brandId !== null && brandId !== undefined && scope.includes(brandId));
}

/**
 * The kind of brand-owned object each path parameter (and body field) names,
 * with the code its route answers for an unknown id: another brand's object
 * answers exactly like one that does not exist.
 */
const owners: Record<string, { code: ErrorCode; kind: OwnedKind }> = {
  brand_id: { code: 'BRAND_NOT_FOUND', kind: 'brand' },
  device_id: { code: 'DEVICE_NOT_FOUND', kind: 'device' },
  account_id: { code: 'WALLET_ACCOUNT_NOT_FOUND', kind: 'wallet_account' },
  transaction_id: { code: 'TRANSACTION_NOT_FOUND', kind: 'transaction' },
  refund_id: { code: 'REFUND_NOT_FOUND', kind: 'refund' },
  delivery_id: { code: 'DELIVERY_NOT_FOUND', kind: 'delivery' },
  sms_record_id: { code: 'SMS_RECORD_NOT_FOUND', kind: 'sms_record' },
  customer_id: { code: 'CUSTOMER_NOT_FOUND', kind: 'customer' },
  statement_id: { code: 'RECONCILIATION_NOT_FOUND', kind: 'statement_upload' },
};

const ID_RE = /^[1-9][0-9]{0,15}$/;

/**
 * Brand scope of console operators limited to some brands, enforced once for
 * every admin route: a path parameter or body field naming a brand-owned
 * object (`:transaction_id`, `:device_id`, `brand_id` in a body, ...) of a
 * brand outside the scope is that route's 404, before the handler runs. Lists
 * filter by the scope in their queries (see `brandScopeOf`).
 */
export function brandScopeGuard(db: Db): RequestHandler {
  return (req, _res, next) => {
    const scope = brandScopeOf(req.principal);
    if (scope === null) return next();
    const named: Array<[string, unknown]> = [...Object.entries(req.params ?? {})];
    const body = (req as Request).body as Record<string, unknown> | undefined;
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      for (const field of ['brand_id', 'device_id']) if (field in body) named.push([field, body[field]]);
    }
    const checks = named
      .filter(([name, value]) => name in owners && (typeof value === 'number' || (typeof value === 'string' && ID_RE.test(value))))
      .map(async ([name, value]) => {
        const owner = owners[name]!;
        const id = Number(value);
        if (!Number.isSafeInteger(id)) return;
        const brandId = await brandOfOwned(db, owner.kind, id);
        // Unknown ids are left to the handler, which answers the same 404.
        if (brandId !== null && !scope.includes(brandId)) throw new AppError(owner.code);
      });
    Promise.all(checks).then(() => next(), next);
  };
}
