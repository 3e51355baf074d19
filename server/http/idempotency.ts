import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../../contract/common/errors.ts';
import type { RouteMeta } from '../../contract/common/meta.ts';
import { claimKey, completeKey, releaseKey, requestHash } from '../domain/idempotency/service.ts';
import type { Mode } from '../../contract/vocabulary.ts';
import type { Logger } from '../infra/logger.ts';
import { isDatabaseUnavailable, sendCode } from './errors.ts';
import type { ControlledTransaction } from 'kysely';
import type { DB, Db } from '../domain/db.ts';

const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** Responses that say nothing about the operation and must not stick to the key. */
function isTransient(status: number): boolean {
  return status >= 500 || status === 429;
}

/**
 * `Idempotency-Key` for routes whose metadata says `idempotent: true` (the OpenAPI
 * generator documents the header from the same metadata), scoped to the calling
 * brand, so it runs after authentication.
 *
 * The key is claimed first in its own committed statement (the unique constraint
 * picks one winner among concurrent requests, `claimKey`). The winner's handler
 * then runs in one database transaction that also stores its response: the operation and the
 * stored response commit together, or neither does. So a crash mid-request leaves
 * nothing done (a later retry may run it), and a completed operation always has
 * its response to replay. The response is stored before it is sent, so a retry
 * arriving right after the answer replays it (`Idempotent-Replayed: true`).
 *
 * A 5xx or 429 rolls the work back and releases the key, so a failed attempt never
 * poisons it. A client that hangs up does not release it: the handler finishes and
 * its response is stored for the retry. A malformed key is a 400 naming
 * `idempotency-key` (ignoring it could let a retry act twice).
 */
export function idempotency({ logger, db }: { logger: Logger; db: Db }): RequestHandler {
  return (req, res, next) => {
    const route = (req as Request & { tsRestRoute?: { metadata?: RouteMeta } }).tsRestRoute;
    const key = req.get('idempotency-key');
    if (!route?.metadata?.idempotent || req.principal.kind !== 'merchant' || key === undefined) return next();
    if (!KEY_RE.test(key)) {
      return next(new AppError('VALIDATION_ERROR', 'Must be 1 to 255 visible ASCII characters', { field: 'idempotency-key' }));
    }
    // Keys are stored per brand and mode: the same key in the other mode is another key, so a test request
    // can neither take a live key first nor be answered with the other mode's response.
    const scope = { brandId: req.principal.brandId, mode: req.principal.mode, key };
    const hash = requestHash(req.method, req.baseUrl + req.path, req.body);
    const run = async () => {
      const claim = await claimKey(db, { ...scope, hash });
      switch (claim.kind) {
        case 'replay':
          res.status(claim.status).setHeader('Idempotent-Replayed', 'true');
          res.type('application/json').send(claim.body);
          return;
        case 'reused':
          return next(new AppError('IDEMPOTENCY_KEY_REUSED', undefined, { field: 'idempotency-key' }));
        case 'in_progress':
          return next(new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS', undefined, { field: 'idempotency-key', headers: { 'Retry-After': '1' } }));
        case 'execute': {
          const release = releaseWithRetry(() => releaseKey(db, scope, claim.token), logger);
          let tx: ControlledTransaction<DB>;
          try {
            tx = await db.startTransaction().execute();
          } catch (err) {
            await release().catch(() => undefined);
            throw err;
          }
          // Services open their own transaction(db, ...) on req.db: inside this one they become savepoints.
          req.db = tx;
          captureResponse(req, res, logger, tx, release, { ...scope, token: claim.token });
          return next();
        }
      }
    };
    run().catch(next);
  };
}

/** Waits between background release attempts, in seconds; their sum stays under LOCK_TIMEOUT_SECONDS. */
const RELEASE_RETRY_SECONDS = [1, 2, 4, 8, 15, 30, 60, 60, 60];

/**
 * A release that cannot reach the database (the failure that made it necessary
 * is often the same outage) is retried in the background until it goes through,
 * so a key whose work rolled back is free again shortly after the database is
 * back, not only after LOCK_TIMEOUT_SECONDS. Safe to repeat: it deletes only a
 * key still held with this token and not completed.
 */
function releaseWithRetry(release: () => Promise<void>, logger: Logger): () => Promise<void> {
  return async () => {
    try {
      await release();
    } catch {
      let attempt = 0;
      const again = () => {
        const wait = RELEASE_RETRY_SECONDS[attempt++];
        if (wait === undefined) return;
        setTimeout(() => {
          release().then(
            () => logger.info('idempotency key released after a database outage'),
            () => again(),
          );
        }, wait * 1000).unref();
      };
      again();
    }
  };
}

function captureResponse(
  req: Request,
  res: Response,
  logger: Logger,
  tx: ControlledTransaction<DB>,
  release: () => Promise<void>,
  claim: { brandId: number; mode: Mode; key: string; token: string },
): void {
  const send = res.json.bind(res);
  let settled = false;
  res.json = (body: unknown) => {
    if (settled) return send(body);
    settled = true;
    const status = res.statusCode;
    const finish = async () => {
      if (isTransient(status)) {
        await tx.rollback().execute();
        await release();
        return;
      }
      // Fails (and rolls everything back) if a stale-lock takeover gave the key to another run.
      await completeKey(tx, claim, claim.token, status, JSON.stringify(body));
      await tx.commit().execute();
    };
    finish().then(
      () => send(body),
      async (err: unknown) => {
        logger.error({ request_id: req.requestId, err: { message: (err as Error)?.message } }, 'idempotent request not committed');
        await tx.rollback().execute().catch(() => undefined);
        await release().catch(() => undefined);
        // Nothing was kept, so the answer must not claim success. When the database
        // went away under the commit its outcome is unknown either way: a 503 tells
        // the client to retry with the same key, which replays or runs it once.
        if (isTransient(status)) send(body);
        else if (isDatabaseUnavailable(err)) {
          res.setHeader('Retry-After', '1');
          sendCode(req, res, 'SERVICE_UNAVAILABLE');
        } else sendCode(req, res, 'INTERNAL_ERROR');
      },
    );
    return res;
  };
}
