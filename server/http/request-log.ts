import type { Request, RequestHandler } from 'express';
import type { Logger } from '../infra/logger.ts';

/**
 * One line per request. It names the route pattern, never the URL: paths and
 * query strings carry emails, phone numbers and tokens.
 */
export function requestLogger(logger: Logger): RequestHandler {
  // Every field of this line is set below, field by field, and none is a
  // credential, a secret or personal data (the route pattern, not the URL), so
  // it skips the logger's redaction. Redaction is the safety net for objects
  // logged whole; pino runs its wildcard redactor once per top-level field of
  // every line, which cost more than the rest of writing this one (BENCHMARKS.md,
  // "Keyed creation").
  const line = logger.child({}, { redact: { paths: [] } });
  return (req, res, next) => {
    res.on('finish', () => {
      const route = (req as Request & { tsRestRoute?: { path: string } }).tsRestRoute?.path ?? null;
      const p = req.principal;
      line.info(
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
