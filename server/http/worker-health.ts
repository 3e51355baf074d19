import express, { type Express } from 'express';
import type { AppDeps } from '../deps.ts';
import { errorHandler, notFoundHandler } from './errors.ts';
import { readiness } from './readiness.ts';
import { requestId } from './request-id.ts';
import { baseSecurityHeaders } from './security-headers.ts';

/**
 * What a `worker` process listens with: the liveness and readiness probes of
 * the API (same paths, same bodies) and nothing else, so an orchestrator can
 * check and restart it while it serves no public route.
 */
export function createWorkerHealthApp(deps: Pick<AppDeps, 'config' | 'db' | 'reads' | 'boss' | 'state' | 'logger'>): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.use(baseSecurityHeaders);
  app.get('/healthz', (_req, res) => {
    res.json({ success: true, data: { status: 'ok', server_time: new Date().toISOString() } });
  });
  app.get('/readyz', (_req, res, next) => {
    readiness(deps).then(({ ready, data }) => void res.status(ready ? 200 : 503).json({ success: true, data }), next);
  });
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
