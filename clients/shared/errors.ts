import type { ErrorCode } from '../../contract/common/errors.ts';

/**
 * Codes the SDK itself produces when there is no error envelope to read: the
 * request never got an answer, or the answer was not the API's JSON.
 */
export type ClientErrorCode = 'CONNECTION_ERROR' | 'TIMEOUT' | 'UNEXPECTED_RESPONSE' | 'PAIRING_REQUIRED';

/**
 * A code from the service's registry, one of the SDK's own, or a code a newer
 * server added after this SDK was built (kept as a plain string, never dropped).
 */
export type PaycollectErrorCode = ErrorCode | ClientErrorCode | (string & {});

export interface PaycollectErrorItem {
  code: PaycollectErrorCode;
  message: string;
  /** Dotted path of the offending value (`amount`, `customer.email`), or null. */
  field: string | null;
}

export interface PaycollectErrorInit {
  code: PaycollectErrorCode;
  message: string;
  errors?: PaycollectErrorItem[];
  status?: number | null;
  requestId?: string | null;
  headers?: Headers;
  body?: unknown;
  cause?: unknown;
}

/** Every error the SDKs throw for a failed call is one of these. */
export class PaycollectError extends Error {
  override name = 'PaycollectError';
  readonly code: PaycollectErrorCode;
  /** One item per problem; `errors[0]` is the one `message` repeats. */
  readonly errors: PaycollectErrorItem[];
  /** HTTP status, or null when no response arrived. */
  readonly status: number | null;
  /** The service's request id (body `request_id`, else the `X-Request-Id` header): quote it to support. */
  readonly requestId: string | null;
  readonly headers: Headers;
  /** The parsed response body, as received. */
  readonly body: unknown;

  constructor(init: PaycollectErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.errors = init.errors ?? [{ code: init.code, message: init.message, field: null }];
    this.status = init.status ?? null;
    this.requestId = init.requestId ?? null;
    this.headers = init.headers ?? new Headers();
    this.body = init.body;
  }

  /** The `field` of the first item, the usual thing to highlight in a form. */
  get field(): string | null {
    return this.errors[0]?.field ?? null;
  }
}

/** 400, 410, 413, 415, 422: the request itself must change before it can succeed. */
export class InvalidRequestError extends PaycollectError {
  override name = 'InvalidRequestError';
}
/** 401: missing, wrong, expired or revoked credential. */
export class AuthenticationError extends PaycollectError {
  override name = 'AuthenticationError';
}
/** 403: valid credential that may not do this. */
export class PermissionError extends PaycollectError {
  override name = 'PermissionError';
}
/** 404: does not exist, or belongs to someone else (the service does not say which). */
export class NotFoundError extends PaycollectError {
  override name = 'NotFoundError';
}
/** 409: state conflict, or an `Idempotency-Key` reused with another request. */
export class ConflictError extends PaycollectError {
  override name = 'ConflictError';
}
/** 429: slow down; `retryAfterMs` says for how long when the service told us. */
export class RateLimitError extends PaycollectError {
  override name = 'RateLimitError';
  get retryAfterMs(): number | null {
    return parseRetryAfterMs(this.headers.get('retry-after'));
  }
}
/** 5xx, or a response that is not the API's JSON. Retried automatically where safe. */
export class ApiError extends PaycollectError {
  override name = 'ApiError';
}
/** No response: DNS, refused or reset connection, TLS. Retried automatically where safe. */
export class ConnectionError extends PaycollectError {
  override name = 'ConnectionError';
}
/** The attempt took longer than `timeoutMs`. The service may still have done the work. */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
}

/**
 * Seconds (`120`) or an HTTP date; null when absent or unreadable. Pure apart
 * from the clock, which can be passed in.
 */
export function parseRetryAfterMs(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value == null) return null;
  const v = value.trim();
  if (/^\d{1,9}$/.test(v)) return Number(v) * 1000;
  if (!/[a-z]/i.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

const errorClassByStatus: Record<number, typeof PaycollectError> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  410: InvalidRequestError,
  413: InvalidRequestError,
  415: InvalidRequestError,
  422: InvalidRequestError,
  429: RateLimitError,
};

function errorClassFor(status: number): typeof PaycollectError {
  return errorClassByStatus[status] ?? (status >= 500 ? ApiError : status >= 400 ? InvalidRequestError : ApiError);
}

function isItem(x: unknown): x is PaycollectErrorItem {
  const i = x as Record<string, unknown>;
  return typeof i === 'object' && i !== null && typeof i.code === 'string' && typeof i.message === 'string';
}

/**
 * Maps a non-2xx answer (or a 2xx that is not the envelope) to a typed error.
 * Reads the envelope `{success: false, error, errors: [{code, message, field}], request_id}`;
 * anything else (a proxy's HTML 502, an empty body) still becomes a typed error
 * with the status and a message saying what came back.
 */
export function errorFromResponse(status: number, headers: Headers, body: unknown): PaycollectError {
  const env = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const items = Array.isArray(env.errors)
    ? env.errors.filter(isItem).map((i) => ({ code: i.code, message: i.message, field: typeof i.field === 'string' ? i.field : null }))
    : [];
  const requestId = (typeof env.request_id === 'string' ? env.request_id : null) ?? headers.get('x-request-id');
  const Class = status >= 200 && status < 300 ? ApiError : errorClassFor(status);
  if (items.length === 0) {
    return new Class({
      code: 'UNEXPECTED_RESPONSE',
      message: `Unexpected response from the API (HTTP ${status})`,
      status,
      requestId,
      headers,
      body,
    });
  }
  const message = typeof env.error === 'string' && env.error !== '' ? env.error : items[0]!.message;
  return new Class({ code: items[0]!.code, message, errors: items, status, requestId, headers, body });
}
