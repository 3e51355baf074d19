import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../../contract/common/errors.ts';
import type { RouteMeta } from '../../contract/common/meta.ts';
import { claimKey, completeKey, releaseKey, requestHash } from '../domain/idempotency/service.ts';
import type { Logger } from '../infra/logger.ts';

const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** Responses that say nothing about the operation and must not stick to the key. */
function isTransient(status: number): boolean {
  return status >= 500 || status === 429;
}

/**
 * `Idempotency-Key` for routes whose metadata says `idempotent: true`, scoped to
 * the calling brand (runs after authentication). The first request's response
 * (status and body, also a 4xx) is stored before it is sent, so a retry that
 * arrives right after the answer replays it with `Idempotent-Replayed: true`.
 * A 5xx or a 429 releases the key instead, so a failed attempt never poisons it.
 * A client that hangs up does not release it: the handler runs to its end and its
 * response is stored, so the client's retry replays it instead of acting twice. A malformed key is a 400 naming `idempotency-key`.
 * The OpenAPI generator documents the header from the same `idempotent` metadata.
 */
export function idempotency(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const route = (req as Request & { tsRestRoute?: { metadata?: RouteMeta } }).tsRestRoute;
    const key = req.get('idempotency-key');
    if (!route?.metadata?.idempotent || req.principal.kind !== 'merchant' || key === undefined) return next();
    // Refused rather than ignored: a retry that silently ran without its key could act twice.
    if (!KEY_RE.test(key)) {
      return next(new AppError('VALIDATION_ERROR', 'Must be 1 to 255 visible ASCII characters', { field: 'idempotency-key' }));
    }
    const brandId = req.principal.brandId;
    const hash = requestHash(req.method, req.baseUrl + req.path, req.body);
    claimKey(req.em.fork(), brandId, key, hash).then((claim) => {
      switch (claim.kind) {
        case 'replay':
          res.status(claim.status).setHeader('Idempotent-Replayed', 'true');
          res.type('application/json').send(claim.body);
          return;
        case 'reused':
          return next(new AppError('IDEMPOTENCY_KEY_REUSED', undefined, { field: 'idempotency-key' }));
        case 'in_progress':
          return next(new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS', undefined, { field: 'idempotency-key', headers: { 'Retry-After': '1' } }));
        case 'execute':
          captureResponse(req, res, logger, brandId, key, claim.token);
          return next();
      }
    }, next);
  };
}

function captureResponse(req: Request, res: Response, logger: Logger, brandId: number, key: string, token: string): void {
  const send = res.json.bind(res);
  let settled = false;
  res.json = (body: unknown) => {
    if (settled) return send(body);
    settled = true;
    const text = JSON.stringify(body);
    const em = req.em.fork();
    const stored = isTransient(res.statusCode) ? releaseKey(em, brandId, key, token) : completeKey(em, brandId, key, token, res.statusCode, text);
    stored
      .catch((err: unknown) => {
        logger.error({ request_id: req.requestId, err: { message: (err as Error)?.message } }, 'idempotency key not stored');
      })
      .finally(() => send(body));
    return res;
  };
}
