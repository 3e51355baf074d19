import type { EntityManager } from '../infra/database/orm.ts';

/** Who is calling, as established by the auth middleware from route metadata. */
export type Principal =
  | { kind: 'merchant'; brandId: number; apiKeyId: number }
  | { kind: 'device'; deviceId: number; deviceUuid: string; brandId: number }
  | { kind: 'admin' }
  | { kind: 'anonymous' };

declare global {
  // Express's Request type is extended by declaration merging; this is the
  // documented way and adds no runtime code.
  namespace Express {
    interface Request {
      requestId: string;
      /** Request-scoped entity manager (a fork), never shared between requests. */
      em: EntityManager;
      principal: Principal;
      startedAt: bigint;
    }
  }
}

export function merchantOf(req: Express.Request): { brandId: number; apiKeyId: number } {
  if (req.principal.kind !== 'merchant') throw new Error('route is not a merchant route');
  return req.principal;
}

export function deviceOf(req: Express.Request): { deviceId: number; deviceUuid: string; brandId: number } {
  if (req.principal.kind !== 'device') throw new Error('route is not a device route');
  return req.principal;
}
