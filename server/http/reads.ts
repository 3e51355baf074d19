import type { Request, RequestHandler } from 'express';
import type { AppDeps } from '../deps.ts';
import type { Db } from '../domain/db.ts';
import type { Principal } from './context.ts';

/**
 * The client a read-your-writes record belongs to (domain/read-routing):
 * a brand (any of its keys, both modes: a merchant's servers and scripts that
 * share a brand see each other's writes) or a console operator (all their
 * sessions). Devices and anonymous callers read no lists.
 */
export function readerOf(principal: Principal): string | null {
  switch (principal.kind) {
    case 'merchant':
      return `brand:${principal.brandId}`;
    case 'admin':
      return principal.operator ? `operator:${principal.operator.id}` : 'admin-token';
    default:
      return null;
  }
}

/**
 * Runs a read that tolerates replication lag (a list, a search, the overview)
 * on the read replica when there is one, keeping the calling client's own
 * writes visible (docs/read-replicas.md). Inside the request's transaction
 * (an idempotent write) the read belongs to that transaction.
 */
export function lagTolerant<T>(req: Pick<Request, 'db' | 'reads' | 'principal'>, run: (db: Db) => Promise<T>): Promise<T> {
  if (req.db.isTransaction) return run(req.db);
  return req.reads.read(readerOf(req.principal), run);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * With a read replica: records each write request's client before its answer
 * leaves (as express-session saves a session before `res.end`), so the client's
 * next read, on whichever API process, finds the record. `res.end` is the last
 * step of every answer, after an idempotent request's commit (http/idempotency.ts).
 * A failure to record is logged and the answer still goes: the write itself is done.
 */
export function recordWrites(deps: Pick<AppDeps, 'reads' | 'logger'>): RequestHandler {
  return (req, res, next) => {
    if (!deps.reads.replica || SAFE_METHODS.has(req.method)) return next();
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    let ending = false;
    res.end = ((...args: unknown[]) => {
      const reader = readerOf(req.principal);
      if (ending || reader === null) return end(...args);
      ending = true;
      deps.reads.wrote(reader).then(
        () => end(...args),
        (err: unknown) => {
          deps.logger.warn({ request_id: req.requestId, err: { message: (err as Error)?.message } }, 'write not recorded for read-your-writes');
          end(...args);
        },
      );
      return res;
    }) as typeof res.end;
    next();
  };
}
