/*
 * What the service said about a call besides its body, kept after every call
 * (`client.lastResponse`) and on every object a method returns
 * (`payment.lastResponse`, not enumerable, so JSON.stringify leaves it out).
 */

/** One quota of the `RateLimit` / `RateLimit-Policy` headers (`"name";r=…;t=…`, `"name";q=…;w=…`). */
export interface RateLimitQuota {
  name: string;
  /** Requests allowed per window, from `RateLimit-Policy`; null when not sent. */
  limit: number | null;
  /** Window length in seconds, from `RateLimit-Policy`; null when not sent. */
  windowSeconds: number | null;
  remaining: number;
  /** Seconds until this quota's window resets. */
  resetSeconds: number;
}

export interface RateLimitInfo {
  /** The tightest quota: fewest requests remaining. */
  remaining: number;
  resetSeconds: number;
  limit: number | null;
  quotas: RateLimitQuota[];
}

export interface ResponseMeta {
  status: number;
  /** `X-Request-Id`: quote it when asking for support. */
  requestId: string | null;
  /** The `Idempotency-Key` sent, or null. */
  idempotencyKey: string | null;
  /** True when the service answered from an earlier call with the same key (`Idempotent-Replayed: true`): nothing was done again. */
  idempotentReplayed: boolean;
  /** Parsed `RateLimit` headers, or null when the route sent none. */
  rateLimit: RateLimitInfo | null;
  /** Every response header, names in lower case. */
  headers: Record<string, string>;
}

/** A method's result with its response metadata; `void` results have none. */
export type WithResponse<T> = T extends object ? T & { readonly lastResponse: ResponseMeta } : T;

/** Structured-field items `"name";k=v;k=v, …` into name → numeric params. */
function parseItems(header: string | null): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  if (!header) return out;
  for (const item of header.split(',')) {
    const [rawName, ...params] = item.trim().split(';');
    if (!rawName) continue;
    const name = rawName.trim().replace(/^"(.*)"$/, '$1');
    const values: Record<string, number> = {};
    for (const p of params) {
      const [k, v] = p.split('=');
      const n = Number(v);
      if (k && v !== undefined && Number.isFinite(n)) values[k.trim()] = n;
    }
    out.set(name, values);
  }
  return out;
}

export function parseRateLimit(headers: Headers): RateLimitInfo | null {
  const state = parseItems(headers.get('ratelimit'));
  const policy = parseItems(headers.get('ratelimit-policy'));
  const quotas: RateLimitQuota[] = [];
  for (const [name, v] of state) {
    if (v.r === undefined || v.t === undefined) continue;
    const p = policy.get(name);
    quotas.push({ name, limit: p?.q ?? null, windowSeconds: p?.w ?? null, remaining: v.r, resetSeconds: v.t });
  }
  if (quotas.length === 0) return null;
  const tightest = quotas.reduce((a, b) => (b.remaining < a.remaining || (b.remaining === a.remaining && b.resetSeconds > a.resetSeconds) ? b : a));
  return { remaining: tightest.remaining, resetSeconds: tightest.resetSeconds, limit: tightest.limit, quotas };
}

export function responseMeta(status: number, headers: Headers, idempotencyKey: string | null): ResponseMeta {
  const all: Record<string, string> = {};
  headers.forEach((value, name) => {
    all[name.toLowerCase()] = value;
  });
  return {
    status,
    requestId: headers.get('x-request-id'),
    idempotencyKey,
    idempotentReplayed: headers.get('idempotent-replayed')?.toLowerCase() === 'true',
    rateLimit: parseRateLimit(headers),
    headers: all,
  };
}

/** Hidden slot on a raw body carrying its metadata from the transport to the method. */
export const RESPONSE_META: unique symbol = Symbol('paycollect.responseMeta');

export function withMeta<T>(value: T, meta: ResponseMeta | undefined): T {
  if (meta && typeof value === 'object' && value !== null) {
    Object.defineProperty(value, 'lastResponse', { value: meta, enumerable: false, configurable: true });
  }
  return value;
}
