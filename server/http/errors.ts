import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { RequestValidationError } from '@ts-rest/express';
import { AppError, errorRegistry, type ErrorCode } from '../../contract/common/errors.ts';
import type { ErrorEnvelope } from '../../contract/common/envelope.ts';
import type { Logger } from '../infra/logger.ts';
import { validationItems } from './validation.ts';

type Item = ErrorEnvelope['errors'][number];

/** The log message of an error answer its route's contract does not declare. */
export const UNDECLARED_ERROR_LOG = 'error answer not declared by the route';

type Checkable = { safeParse(v: unknown): { success: boolean } };

/**
 * ts-rest validates what a handler returns, but errors reach the client through
 * here. An answer that the matched route's contract does not describe (a code
 * it does not declare for this status) is sent unchanged, so the wire stays as
 * it was, and logged as an error: the contract, the OpenAPI document and the
 * SDK types would be wrong about it. Tests fail on that log line.
 */
export function undeclaredError(req: Request, status: number, items: Item[]): string | null {
  const route = (req as Request & { tsRestRoute?: { path: string; method: string; responses: Record<number, unknown> } }).tsRestRoute;
  if (!route) return null;
  const schema = route.responses[status] as Checkable | undefined;
  const body: ErrorEnvelope = { success: false, error: items[0]?.message ?? 'Error', errors: items, request_id: req.requestId };
  if (schema?.safeParse(body).success) return null;
  return `${route.method} ${route.path} answered ${status} ${items.map((e) => e.code).join(',')}, which its contract does not declare`;
}

function sendError(req: Request, res: Response, status: number, items: Item[], headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  const body: ErrorEnvelope = {
    success: false,
    error: items[0]?.message ?? 'Error',
    errors: items,
    request_id: req.requestId,
  };
  res.status(status).json(body);
}

export function sendCode(req: Request, res: Response, code: ErrorCode, message?: string, field: string | null = null): void {
  const def = errorRegistry[code];
  sendError(req, res, def.status, [{ code, message: message ?? def.message, field }]);
}

/** Errors raised by express.json (body-parser), identified by their `type`. */
const bodyParserErrors: Record<string, ErrorCode> = {
  'entity.parse.failed': 'MALFORMED_JSON',
  'entity.too.large': 'PAYLOAD_TOO_LARGE',
  'encoding.unsupported': 'UNSUPPORTED_MEDIA_TYPE',
  'charset.unsupported': 'UNSUPPORTED_MEDIA_TYPE',
  'request.size.invalid': 'VALIDATION_ERROR',
  'request.aborted': 'VALIDATION_ERROR',
  'stream.encoding.set': 'INTERNAL_ERROR',
  'entity.utf8.invalid': 'MALFORMED_JSON',
};

const clientErrorMessages: Record<string, string> = {
  'entity.utf8.invalid': 'Request body is not valid UTF-8',
};

/**
 * Other client errors raised before a handler runs (http-errors style: a 4xx
 * `status` and `expose`), such as a path that is not valid percent-encoding or
 * a body whose Content-Encoding does not decode. Never a 500: the client sent it.
 */
function clientError(err: unknown): { code: ErrorCode; message: string } | null {
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; code?: unknown } | null;
  const status = Number(e?.status ?? e?.statusCode);
  if (err instanceof URIError && status === 400) return { code: 'VALIDATION_ERROR', message: 'The path is not valid percent-encoded UTF-8' };
  if (typeof e?.code === 'string' && e.code.startsWith('Z_') && status === 400) return { code: 'MALFORMED_JSON', message: 'Request body could not be decompressed' };
  if (e?.expose !== true || !(status >= 400 && status < 500)) return null;
  if (status === 413) return { code: 'PAYLOAD_TOO_LARGE', message: errorRegistry.PAYLOAD_TOO_LARGE.message };
  if (status === 415) return { code: 'UNSUPPORTED_MEDIA_TYPE', message: errorRegistry.UNSUPPORTED_MEDIA_TYPE.message };
  return { code: 'VALIDATION_ERROR', message: 'The request could not be read' };
}

/** SQLSTATE classes and node socket errors that mean "the database is not reachable". */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (/^(08|57P)/.test(code)) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code)) return true;
  if (e?.name === 'ConnectionException') return true;
  const msg = typeof e?.message === 'string' ? e.message : '';
  if (/Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(msg)) return true;
  return e?.cause ? isDatabaseUnavailable(e.cause) : false;
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  const answer = (req: Request, res: Response, status: number, items: Item[], headers: Record<string, string> = {}) => {
    const undeclared = undeclaredError(req, status, items);
    if (undeclared) logger.error({ request_id: req.requestId }, `${UNDECLARED_ERROR_LOG}: ${undeclared}`);
    sendError(req, res, status, items, headers);
  };
  const answerCode = (req: Request, res: Response, code: ErrorCode, message?: string) =>
    answer(req, res, errorRegistry[code].status, [{ code, message: message ?? errorRegistry[code].message, field: null }]);
  return (err, req, res, _next) => {
    // A 500 raised as an AppError (a PII token that does not decrypt, a missing
    // key) carries an internal message: it goes to the log, the client gets the
    // bare envelope like any other unexpected error.
    if (err instanceof AppError && err.status !== 500) {
      return answer(req, res, err.status, [...err.details], err.headers);
    }
    if (err instanceof RequestValidationError) {
      return answer(req, res, 400, validationItems(err));
    }
    const type = (err as { type?: unknown })?.type;
    if (typeof type === 'string' && type in bodyParserErrors) {
      const code = bodyParserErrors[type]!;
      return answerCode(req, res, code, clientErrorMessages[type]);
    }
    const client = clientError(err);
    if (client) return answerCode(req, res, client.code, client.message);
    if (isDatabaseUnavailable(err)) {
      logger.warn({ request_id: req.requestId, err: { message: String((err as Error)?.message ?? err) } }, 'database unavailable');
      return answer(req, res, 503, [{ code: 'SERVICE_UNAVAILABLE', message: errorRegistry.SERVICE_UNAVAILABLE.message, field: null }], {
        'Retry-After': '1',
      });
    }
    logger.error({ request_id: req.requestId, err }, 'unhandled error');
    return answerCode(req, res, 'INTERNAL_ERROR');
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendCode(req, res, 'NOT_FOUND', `No route for ${req.method} ${req.path.slice(0, 200).replace(/[^\x20-\x7e]/g, '?')}`);
};
