import { z } from 'zod';
import type { RateLimitKind } from '../../../contract/common/meta.ts';

/**
 * Rate limits: pure parts (quota specs, which quotas a route takes, window
 * arithmetic and the IETF header values). The counting itself is in queries.ts,
 * in PostgreSQL, so every server process shares one count.
 *
 * Algorithm: fixed windows aligned to the epoch (a 60 s window starts at every
 * whole minute), one counter row per (bucket, window). Chosen over a sliding
 * window because it is one atomic upsert with an exact `Retry-After`; the price
 * is that a client can spend two quotas back to back around a window boundary,
 * so the hard bound is 2 × quota per window (documented in README and SECURITY.md).
 */

/** A quota: at most `limit` requests per `windowSeconds`. */
export interface Quota {
  limit: number;
  windowSeconds: number;
}

/** The quotas the service enforces; each is a `RateLimit-Policy` item name. */
export const quotaNames = ['api-key', 'device', 'pairing', 'pairing-global', 'token-refresh', 'checkout', 'login'] as const;
type QuotaName = (typeof quotaNames)[number];

const QUOTA_RE = /^([0-9]{1,9})\/([0-9]{1,7})$/;

/** `"600/60"` → 600 requests per 60 s; `"off"` → null (no limit). */
export function parseQuota(spec: string): Quota | null | undefined {
  if (spec === 'off') return null;
  const m = QUOTA_RE.exec(spec);
  if (!m) return undefined;
  const limit = Number(m[1]);
  const windowSeconds = Number(m[2]);
  if (limit < 1 || windowSeconds < 1 || windowSeconds > 86_400) return undefined;
  return { limit, windowSeconds };
}

const quotaVar = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((v, ctx) => {
      const q = parseQuota(v);
      if (q === undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be <requests>/<seconds> (seconds 1..86400), e.g. 600/60, or off' });
        return z.NEVER;
      }
      return q;
    });

/** Environment variables of the rate limiter (spread into config.ts's schema). */
export const rateLimitEnvShape = {
  RATE_LIMIT_ENABLED: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .default('true')
    .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  /** Per API key, every merchant route. */
  RATE_LIMIT_API_KEY: quotaVar('600/60'),
  /** Per paired device, every device route that takes the access token. */
  RATE_LIMIT_DEVICE: quotaVar('120/60'),
  /** Per client address, pairing attempts (a phone needs one). */
  RATE_LIMIT_PAIRING: quotaVar('10/900'),
  /** Failed pairing attempts from all addresses together: bounds guessing over the whole code space. */
  RATE_LIMIT_PAIRING_GLOBAL: quotaVar('300/900'),
  /** Per client address, token refreshes (a phone needs one a day). */
  RATE_LIMIT_TOKEN_REFRESH: quotaVar('30/900'),
  /** Per client address, the public checkout JSON routes. */
  RATE_LIMIT_CHECKOUT: quotaVar('120/60'),
  /** Per client address, console login attempts (each account also locks after 5 failures in 15 minutes). */
  RATE_LIMIT_LOGIN: quotaVar('30/900'),
};

export type RateLimitSettings = { RATE_LIMIT_ENABLED: boolean } & {
  [K in Exclude<keyof typeof rateLimitEnvShape, 'RATE_LIMIT_ENABLED'>]: Quota | null;
};

const settingOf: Record<QuotaName, Exclude<keyof RateLimitSettings, 'RATE_LIMIT_ENABLED'>> = {
  'api-key': 'RATE_LIMIT_API_KEY',
  device: 'RATE_LIMIT_DEVICE',
  pairing: 'RATE_LIMIT_PAIRING',
  'pairing-global': 'RATE_LIMIT_PAIRING_GLOBAL',
  'token-refresh': 'RATE_LIMIT_TOKEN_REFRESH',
  checkout: 'RATE_LIMIT_CHECKOUT',
  login: 'RATE_LIMIT_LOGIN',
};

/** Which limit a route takes when its metadata names none: follows who may call it. */
export function defaultKindFor(auth: string): RateLimitKind | null {
  switch (auth) {
    case 'merchant':
      return 'api-key';
    case 'device':
      return 'device';
    case 'pairing':
      return 'pairing';
    case 'device-refresh':
      return 'token-refresh';
    case 'checkout':
      return 'checkout';
    default:
      // admin: one trusted token; none: probes and signed gateway callbacks.
      return null;
  }
}

/** Who a bucket counts: the credential, or the caller's address (hashed). */
export interface Caller {
  apiKeyId?: number;
  deviceId?: number;
  /** Keyed hash of the client address, never the address itself. */
  addressKey: string;
}

/**
 * One counter a request spends. `failuresOnly` counters are given back when
 * the request succeeds: the code-space counter measures wrong guesses, so
 * phones that pair correctly never use it up.
 */
export interface Bucket {
  quota: QuotaName;
  key: string;
  limit: number;
  windowSeconds: number;
  failuresOnly: boolean;
}

/** The buckets a request of this kind spends, skipping quotas configured `off`. */
export function bucketsFor(kind: RateLimitKind, caller: Caller, settings: RateLimitSettings): Bucket[] {
  const make = (quota: QuotaName, key: string | null, failuresOnly = false): Bucket[] => {
    const q = settings[settingOf[quota]];
    return q && key !== null ? [{ quota, key, limit: q.limit, windowSeconds: q.windowSeconds, failuresOnly }] : [];
  };
  switch (kind) {
    case 'api-key':
      return make('api-key', caller.apiKeyId === undefined ? null : `api-key:${caller.apiKeyId}`);
    case 'device':
      return make('device', caller.deviceId === undefined ? null : `device:${caller.deviceId}`);
    case 'pairing':
      return [...make('pairing', `pairing:${caller.addressKey}`), ...make('pairing-global', 'pairing-global', true)];
    case 'token-refresh':
      return make('token-refresh', `token-refresh:${caller.addressKey}`);
    case 'checkout':
      return make('checkout', `checkout:${caller.addressKey}`);
    case 'login':
      return make('login', `login:${caller.addressKey}`);
  }
}

/** A bucket after this request was counted. */
export interface BucketState extends Bucket {
  /** Requests counted in the current window, this one included. */
  hits: number;
  /** Seconds until the window ends (at least 1). */
  resetSeconds: number;
}

/** The request is refused when any of its buckets went over its limit. */
export function isLimited(states: readonly BucketState[]): boolean {
  return states.some((s) => s.hits > s.limit);
}

/**
 * Header values per draft-ietf-httpapi-ratelimit-headers (-09/-10: structured
 * field lists): `RateLimit-Policy: "api-key";q=600;w=60` describes each quota,
 * `RateLimit: "api-key";r=599;t=42` the remaining quota and seconds to reset.
 * `Retry-After` only on a refusal: the longest wait among the exhausted buckets.
 */
export function rateLimitHeaders(states: readonly BucketState[]): Record<string, string> {
  if (states.length === 0) return {};
  const headers: Record<string, string> = {
    'RateLimit-Policy': states.map((s) => `"${s.quota}";q=${s.limit};w=${s.windowSeconds}`).join(', '),
    RateLimit: states.map((s) => `"${s.quota}";r=${Math.max(0, s.limit - s.hits)};t=${s.resetSeconds}`).join(', '),
  };
  const exhausted = states.filter((s) => s.hits > s.limit);
  if (exhausted.length) headers['Retry-After'] = String(Math.max(...exhausted.map((s) => s.resetSeconds)));
  return headers;
}
