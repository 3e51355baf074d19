import {
  ConnectionError,
  PaycollectError,
  TimeoutError,
  errorFromResponse,
  parseRetryAfterMs,
} from './errors.ts';
import { RESPONSE_META, responseMeta, type ResponseMeta } from './response-meta.ts';
import { DEFAULT_RETRY_DELAY, retryDelayMs, type AttemptOutcome, type RetryDelayConfig } from './retry.ts';

/** The part of `fetch` the SDK uses, so any WHATWG-compatible fetch can be passed in. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Options every SDK client takes. */
export interface ClientOptions {
  /** Where the service runs, e.g. `https://pay.example.com` (no trailing `/api/...`). */
  baseUrl: string;
  /** Per attempt, including reading the body. Default 30 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt, where a retry is safe. Default 2; 0 turns retries off. */
  maxRetries?: number;
  /** A custom fetch (proxy agents, instrumentation, tests). Default: the global fetch. */
  fetch?: FetchLike;
  /** Backoff schedule; tests shorten it. */
  retryDelay?: Partial<RetryDelayConfig>;
  /** Extra headers sent on every call. */
  headers?: Record<string, string>;
}

/** Options of one call, the last argument of every SDK method. */
export interface RequestOptions {
  /**
   * Sent as `Idempotency-Key`. Every POST gets a random one when not given; the
   * same key is sent on every retry of the call. Pass your own to make a call
   * safe to repeat across process restarts (e.g. your order id).
   */
  idempotencyKey?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  maxRetries?: number;
  /** Cancels the call (and its retries); the signal's reason is thrown as is. */
  signal?: AbortSignal;
}

export interface SdkIdentity {
  /** Package name, e.g. `@paycollect/merchant`. */
  name: string;
  version: string;
}

/** The part of a contract route the transport reads (kept structural so declarations need no ts-rest types). */
export interface RouteInfo {
  method: string;
  path: string;
  metadata?: unknown;
}

export interface HttpRequest {
  route: RouteInfo;
  /** Path with parameters filled in. */
  path: string;
  query?: Record<string, unknown>;
  /** undefined: no body is sent. */
  body?: unknown;
  /** Credentials and other headers the SDK adds for this route. */
  headers?: Record<string, string>;
  options?: RequestOptions;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  body: unknown;
  requestId: string | null;
  meta: ResponseMeta;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RETRIES = 2;
/** Methods HTTP defines as idempotent: repeating them cannot do the work twice. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** Node/undici codes meaning no connection was ever made, so nothing was sent. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

function causeCode(err: unknown): string | null {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') return e.code;
  }
  return null;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function encodeQuery(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, v instanceof Date ? v.toISOString() : String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** A v4 UUID from Web Crypto (Node 19+, browsers; React Native with a getRandomValues polyfill). */
export function randomId(): string {
  const c = globalThis.crypto as Crypto | undefined;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  if (typeof c?.getRandomValues !== 'function') throw new Error('No Web Crypto: install a crypto.getRandomValues polyfill');
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** AbortSignal.any where it exists (Node 20.3+, browsers); a small equivalent elsewhere (React Native). */
function anySignal(signals: AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals);
  const controller = new AbortController();
  for (const s of signals) {
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}

/**
 * The transport both SDKs share: URL, headers, timeout, retries with backoff,
 * idempotency keys, JSON and error typing. It knows nothing about credentials;
 * each SDK passes the headers its routes need.
 */
export class HttpCore {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly retryDelay: RetryDelayConfig;
  private readonly fetchImpl: FetchLike;
  private readonly defaultHeaders: Record<string, string>;
  /** Metadata of the last successful call made through this transport. */
  lastResponse: ResponseMeta | null = null;

  constructor(options: ClientOptions, identity: SdkIdentity) {
    if (typeof options?.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl)) {
      throw new TypeError('baseUrl must be an http(s) URL, e.g. "https://pay.example.com"');
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!(this.timeoutMs > 0)) throw new TypeError('timeoutMs must be a positive number');
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0) throw new TypeError('maxRetries must be a whole number >= 0');
    this.retryDelay = { ...DEFAULT_RETRY_DELAY, ...options.retryDelay };
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== 'function') throw new TypeError('No fetch available: pass options.fetch');
    this.fetchImpl = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    // Read through globalThis so the device SDK builds and runs without Node's types or globals.
    const nodeVersion = (globalThis as { process?: { version?: unknown } }).process?.version;
    const runtime = typeof nodeVersion === 'string' ? ` node/${nodeVersion}` : '';
    this.defaultHeaders = {
      accept: 'application/json',
      'user-agent': `${identity.name}/${identity.version}${runtime}`,
      'x-client': `${identity.name}/${identity.version}`,
      ...lowerKeys(options.headers ?? {}),
    };
  }

  /** Sends one call, retrying where safe; resolves with a 2xx or throws a PaycollectError. */
  async send(req: HttpRequest): Promise<HttpResponse> {
    const options = req.options ?? {};
    const method = req.route.method;
    const callerHeaders = lowerKeys(options.headers ?? {});
    const headers: Record<string, string> = { ...this.defaultHeaders, ...lowerKeys(req.headers ?? {}), ...callerHeaders };
    const callerKey = options.idempotencyKey ?? callerHeaders['idempotency-key'];
    if (callerKey !== undefined) headers['idempotency-key'] = callerKey;
    else if (method === 'POST') headers['idempotency-key'] = randomId();
    let payload: string | undefined;
    if (req.body !== undefined) {
      payload = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    const url = this.baseUrl + req.path + encodeQuery(req.query);
    const metadata = (req.route.metadata ?? {}) as { idempotent?: unknown };
    // A key the service ignores does not make a repeat safe; one it honours (route
    // metadata), or one the caller chose knowing the operation, does.
    const safeToRepeat = IDEMPOTENT_METHODS.has(method) || metadata.idempotent === true || callerKey !== undefined;
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;

    for (let retries = 0; ; retries++) {
      const attempt = await this.attempt(url, { method, headers, body: payload }, timeoutMs, options.signal);
      if ('response' in attempt) {
        const res = attempt.response;
        this.lastResponse = res.meta;
        // Travels with the body through the SDK's invoker to the method, which puts it on the result.
        if (typeof res.body === 'object' && res.body !== null) Object.defineProperty(res.body, RESPONSE_META, { value: res.meta, enumerable: false });
        return res;
      }
      const delay = retryDelayMs({ outcome: attempt.outcome, retriesSoFar: retries, maxRetries, safeToRepeat, config: this.retryDelay });
      if (delay === null) throw attempt.error;
      await sleep(delay, options.signal);
    }
  }

  private async attempt(
    url: string,
    init: { method: string; headers: Record<string, string>; body: string | undefined },
    timeoutMs: number,
    callerSignal: AbortSignal | undefined,
  ): Promise<{ response: HttpResponse } | { outcome: AttemptOutcome; error: PaycollectError }> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const signal = callerSignal ? anySignal([callerSignal, timeout.signal]) : timeout.signal;
    let status: number;
    let headers: Headers;
    let text: string;
    try {
      const res = await this.fetchImpl(url, { ...init, signal });
      status = res.status;
      headers = res.headers;
      text = await res.text();
    } catch (err) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (timeout.signal.aborted) {
        return {
          outcome: { kind: 'timeout' },
          error: new TimeoutError({ code: 'TIMEOUT', message: `Request timed out after ${timeoutMs} ms`, cause: err }),
        };
      }
      const code = causeCode(err);
      return {
        outcome: { kind: 'network', beforeSend: code !== null && NOT_SENT_CODES.has(code) },
        error: new ConnectionError({
          code: 'CONNECTION_ERROR',
          message: `Could not reach the API${code ? ` (${code})` : ''}: ${(err as Error)?.message ?? String(err)}`,
          cause: err,
        }),
      };
    } finally {
      clearTimeout(timer);
    }

    let body: unknown = undefined;
    let parsed = true;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        parsed = false;
        body = text.slice(0, 2000);
      }
    }
    const requestId = headers.get('x-request-id');
    const success = status >= 200 && status < 300;
    if (success && parsed && (status === 204 || (body as { success?: unknown })?.success === true)) {
      return { response: { status, headers, body, requestId, meta: responseMeta(status, headers, init.headers['idempotency-key'] ?? null) } };
    }
    const error = errorFromResponse(status, headers, body);
    return {
      outcome: { kind: 'response', status, code: typeof error.code === 'string' ? error.code : null, retryAfterMs: parseRetryAfterMs(headers.get('retry-after')) },
      error,
    };
  }
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
