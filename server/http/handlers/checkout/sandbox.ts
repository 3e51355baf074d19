import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { initServer } from '@ts-rest/express';
import { AppError } from '../../../../contract/common/errors.ts';
import { contract } from '../../../../contract/index.ts';
import { SANDBOX_SIGNATURE_HEADER, SANDBOX_SIGNATURE_TOLERANCE_SECONDS } from '../../../../contract/checkout/sandbox.ts';
import type { AppDeps } from '../../../deps.ts';
import { applySandboxCallback } from '../../../domain/sandbox/callback.ts';
import { verifySandboxSignature } from '../../../domain/sandbox/signature.ts';

const s = initServer();

const REFUSALS = {
  missing: 'Missing signature',
  malformed: 'Malformed signature header',
  stale: 'Signature timestamp is outside the tolerance',
  mismatch: 'Signature does not match',
} as const;

/**
 * Runs before body validation: an unsigned or wrongly signed request learns
 * nothing about what the body should look like. The MAC is over the raw bytes
 * as received (kept by the JSON parser), never a re-serialisation.
 */
function requireSandboxSignature(deps: AppDeps): RequestHandler {
  return (req, _res, next) => {
    const raw = (req as IncomingMessage & { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
    const check = verifySandboxSignature(
      req.get(SANDBOX_SIGNATURE_HEADER),
      raw,
      deps.secrets.sandboxCallbackSecret,
      Math.floor(Date.now() / 1000),
      SANDBOX_SIGNATURE_TOLERANCE_SECONDS,
    );
    if (check.ok) return next();
    deps.logger.warn({ request_id: req.requestId, reason: check.reason }, 'sandbox callback refused');
    next(new AppError('INVALID_SIGNATURE', REFUSALS[check.reason]));
  };
}

export function checkoutSandboxHandlers(deps: AppDeps) {
  return s.router(contract.checkout.sandbox, {
    callback: {
      middleware: [requireSandboxSignature(deps)],
      handler: async ({ req, body }) => {
        const result = await applySandboxCallback(req.db, body);
        return { status: 200, body: { success: true, data: { trx_id: result.trxId, status: result.status, changed: result.changed } } };
      },
    },
  });
}
