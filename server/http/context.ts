import type { ApiKeyScope, Mode, OperatorRole } from '../../contract/vocabulary.ts';
import type { Db } from '../domain/db.ts';
import type { ReadRouter } from '../domain/read-routing/router.ts';

/** Who is calling, as established by the auth middleware from route metadata. */
export type Principal =
  | { kind: 'merchant'; brandId: number; apiKeyId: number; mode: Mode; scopes: ApiKeyScope[] | null }
  | { kind: 'device'; deviceId: number; deviceUuid: string; brandId: number; mode: Mode }
  | AdminPrincipal
  | { kind: 'anonymous' };

/**
 * An admin caller: the admin token (an owner over every brand, `operator`
 * null) or a console operator's session (their role and brands).
 */
export interface AdminPrincipal {
  kind: 'admin';
  role: OperatorRole;
  /** Brands in scope; null: every brand. */
  brandIds: number[] | null;
  operator: { id: string; email: string; sessionId: number } | null;
}

declare global {
  // Express's Request type is extended by declaration merging; this is the
  // documented way and adds no runtime code.
  namespace Express {
    interface Request {
      requestId: string;
      /** The request's database handle: the pool, or the transaction an idempotent request runs in. */
      db: Db;
      /** Where this request's lag-tolerant reads go (http/reads.ts `lagTolerant`). */
      reads: ReadRouter;
      principal: Principal;
      startedAt: bigint;
      /** The per-key rate-limit count the API-key lookup did for this request (http/auth.ts), used by the limiter instead of counting again. */
      apiKeyCount?: { apiKeyId: number; hits: number; resetSeconds: number; windowEpoch: number };
    }
  }
}

/** The calling key's brand and mode: every merchant read and write is scoped to both. */
export function merchantOf(req: Express.Request): { brandId: number; apiKeyId: number; mode: Mode } {
  if (req.principal.kind !== 'merchant') throw new Error('route is not a merchant route');
  return req.principal;
}

export function deviceOf(req: Express.Request): { deviceId: number; deviceUuid: string; brandId: number; mode: Mode } {
  if (req.principal.kind !== 'device') throw new Error('route is not a device route');
  return req.principal;
}
