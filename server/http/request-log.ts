import type { Request, RequestHandler } from 'express';
import type { Logger } from '../infra/logger.ts';

/**
 * One line per request. It names the route pattern, never the URL: paths and
 * query strings carry emails, phone numbers and tokens.
 */
export function requestLogger(logger: Logger): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => {
      const route = (req as Request & { tsRestRoute?: { path: string } }).tsRestRoute?.path ?? null;
      const p = req.principal;
      logger.info(
        {
          request_id: req.requestId,
          method: req.method,
          route,
          status: res.statusCode,
          duration_ms: Number((process.hrtime.bigint() - req.startedAt) / 1000n) / 1000,
          brand_id: p?.kind === 'merchant' || p?.kind === 'device' ? p.brandId : undefined,
          device_id: p?.kind === 'device' ? p.deviceId : undefined,
        },
        'request',
      );
    });
    next();
  };
}
