import express, { type Express } from 'express';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import { contract } from '../contract/index.ts';
import type { AppDeps } from './deps.ts';
import { requestId } from './http/request-id.ts';
import { baseSecurityHeaders } from './http/security-headers.ts';
import { jsonBody } from './http/body.ts';
import { errorHandler, notFoundHandler } from './http/errors.ts';
import { apiKeyLookup } from './domain/brands/service.ts';
import { adminAuthenticator, authMiddleware, merchantAuthenticator, sessionAuthenticator } from './http/auth.ts';
import { csrfTokenizer } from './domain/operators/service.ts';
import { sessionPolicy } from './http/handlers/admin/session.ts';
import { brandScopeGuard } from './http/brand-scope.ts';
import { deviceAuthenticator } from './http/device-auth.ts';
import { deviceTokenKeys } from './domain/devices/tokens.ts';
import { docsRouter } from './http/docs.ts';
import { requestLogger } from './http/request-log.ts';
import { idempotency } from './http/idempotency.ts';
import { apiKeyWindowSeconds, countsApiKeyHit, createRateLimiter } from './http/rate-limit.ts';
import { inputGuard } from './http/input-guard.ts';
import { systemHandlers } from './http/handlers/system.ts';
import { merchantHandlers } from './http/handlers/merchant/index.ts';
import { deviceHandlers } from './http/handlers/device/index.ts';
import { adminHandlers } from './http/handlers/admin/index.ts';
import { checkoutHandlers } from './http/handlers/checkout/index.ts';
import { ownpayContract } from '../contract/ownpay/index.ts';
import { ownpayDialectGate, ownpayHandlers } from './http/handlers/ownpay/index.ts';
import { ownpayDeviceContract } from '../contract/ownpay/device.ts';
import { ownpayDeviceGate, ownpayDeviceHandlers } from './http/handlers/ownpay/device.ts';
import { createSmsMatcher } from './domain/sms/index.ts';
import { checkoutPages } from './http/checkout-pages/routes.ts';
import { consoleRouter } from './http/console.ts';
import { recordWrites } from './http/reads.ts';

const s = initServer();

/** The Express app without listen(): main.ts listens, tests use it in-process. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.TRUST_PROXY);
  app.set('etag', false);

  app.use(requestId);
  app.use(baseSecurityHeaders);
  app.use(requestLogger(deps.logger));
  // With a read replica, a client's writes are recorded before their answers leave (http/reads.ts).
  app.use(recordWrites(deps));
  // The database handle of the request: the pool, or the transaction an idempotent request runs in (http/idempotency.ts).
  app.use((req, _res, next) => {
    req.db = deps.db;
    req.reads = deps.reads;
    next();
  });
  app.use('/api', ...jsonBody(deps.config.BODY_LIMIT_BYTES));
  app.use(docsRouter());

  const consoleSession = sessionAuthenticator({
    db: deps.db,
    policy: sessionPolicy(deps.config),
    csrfToken: csrfTokenizer(Buffer.from(deps.secrets.blindIndexKey, 'hex')),
  });

  // One limiter (one counting batch, one purge clock) for the API and the checkout's pages.
  const limiter = createRateLimiter(deps);

  const router = s.router(contract, {
    system: systemHandlers(deps),
    merchant: merchantHandlers(deps),
    device: deviceHandlers(deps),
    admin: adminHandlers(deps),
    checkout: checkoutHandlers(deps),
  });

  const globalMiddleware = [
      // ts-rest types a global middleware's `req.res` as the intersection of every
      // route's response bodies, which is `never` as soon as two routes answer
      // different statuses (200 vs 201); this middleware never writes a body.
      authMiddleware({
        // A request limited per API key is counted by its key's lookup, in the same statement (one round trip fewer).
        merchant: merchantAuthenticator(apiKeyLookup(() => deps.db, apiKeyWindowSeconds(deps.config)), countsApiKeyHit(deps.config)),
        admin: adminAuthenticator(deps.secrets.adminToken, consoleSession),
        operator: consoleSession,
        device: deviceAuthenticator(deviceTokenKeys(deps.secrets)),
      }) as never,
      // After auth: an operator limited to some brands gets a 404 for another brand's object.
      brandScopeGuard(deps.db) as never,
      // After auth: the credential (or the caller's address) is the bucket; before
      // idempotency, so a refused request claims no key.
      limiter.byRoute as never,
      // Text PostgreSQL cannot store as sent (NUL, unpaired surrogates): a 400 naming the field.
      inputGuard as never,
      // After auth: keys are scoped to the calling brand.
      idempotency(deps) as never,
  ];
  const endpointOptions = {
    logInitialization: false,
    jsonQuery: false,
    // Every response is checked against the contract, so a handler can never
    // answer something the SDKs and the OpenAPI document do not describe.
    responseValidation: true,
  };
  // Validation failures go to the error handler (the envelope), on both contracts.
  const requestValidationErrorHandler = (err: unknown, _req: unknown, _res: unknown, next: (e: unknown) => void) => next(err);

  // The OwnPay dialect first: its routes share methods and paths with native
  // ones, and its gate sends any key not spelled `op_…` on to them before any
  // other middleware runs (README "Coming from OwnPay").
  createExpressEndpoints(ownpayContract, s.router(ownpayContract, ownpayHandlers(deps)), app, {
    ...endpointOptions,
    globalMiddleware: [ownpayDialectGate as never, ...globalMiddleware],
    requestValidationErrorHandler,
  });
  // OwnPay's Android app (README "The OwnPay Android app"): its own paths, but
  // for the token refresh, which its gate hands to the native route unless the
  // token names a device the app paired.
  createExpressEndpoints(
    ownpayDeviceContract,
    ownpayDeviceHandlers(
      deps,
      createSmsMatcher({
        cipher: deps.crypto.pii,
        onBatchError: (err) => deps.logger.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'SMS batch matching failed; matching its records one by one'),
      }),
    ),
    app,
    { ...endpointOptions, globalMiddleware: [ownpayDeviceGate(deps) as never, ...globalMiddleware], requestValidationErrorHandler },
  );
  createExpressEndpoints(contract, router, app, { ...endpointOptions, globalMiddleware, requestValidationErrorHandler });

  // The hosted checkout and sandbox HTML pages (HTML answers, also for their 404s).
  app.use(checkoutPages(deps, limiter));
  // The operator console (static single-page app over the admin API).
  app.use(consoleRouter());
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
