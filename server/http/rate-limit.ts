import { createHmac, createSecretKey } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { AppError } from '../../contract/common/errors.ts';
import type { RateLimitKind, RouteMeta } from '../../contract/common/meta.ts';
import type { AppDeps } from '../deps.ts';
import { bucketsFor, defaultKindFor, isLimited, rateLimitHeaders, type Caller, type RateLimitSettings } from '../domain/rate-limit/policy.ts';
import { countHits, giveBackHit, purgeExpiredWindows, type CountedBucket } from '../domain/rate-limit/queries.ts';

/**
 * How long the limiter may take before the request goes ahead uncounted. A
 * per-key count made by the API-key lookup's own statement (countsApiKeyHit) is
 * part of authentication and waited for like the lookup; its failure still
 * falls back here.
 */
const STORE_TIMEOUT_MS = 1000;
/** Expired windows are purged by whichever process sees traffic, at most this often. */
const PURGE_EVERY_MS = 60_000;
/** A failing store is reported at most this often per process (it may fail on every request). */
const WARN_EVERY_MS = 10_000;

export function routeRateLimitKind(meta: RouteMeta | undefined): RateLimitKind | null {
  if (!meta || meta.rateLimit === false) return null;
  return meta.rateLimit ?? defaultKindFor(meta.auth);
}

/**
 * Whether this request's rate limit is the per-API-key quota: then the API-key
 * lookup counts it in its own statement (domain/brands/service.ts
 * `lookupAndCountApiKey`) and the limiter below uses that count.
 */
export function countsApiKeyHit(settings: RateLimitSettings): (req: Request) => boolean {
  return (req) => {
    if (!settings.RATE_LIMIT_ENABLED || settings.RATE_LIMIT_API_KEY === null) return false;
    const meta = (req as Request & { tsRestRoute?: { metadata?: RouteMeta } }).tsRestRoute?.metadata;
    return routeRateLimitKind(meta) === 'api-key';
  };
}

/** The per-key quota's window, for the lookup that counts (null: nothing to count). */
export function apiKeyWindowSeconds(settings: RateLimitSettings): number | null {
  return settings.RATE_LIMIT_ENABLED ? (settings.RATE_LIMIT_API_KEY?.windowSeconds ?? null) : null;
}

/**
 * The bucket of a client address: IPv6 counts per /64 (one subscriber usually
 * holds a whole /64, so single addresses would be free to rotate), IPv4 and
 * IPv4-mapped IPv6 per address. Stored only as a keyed hash: the counters
 * table never holds an address.
 */
export function addressKeyer(secret: Buffer): (ip: string | undefined) => string {
  // Derived once, as a KeyObject: a raw Buffer key costs ~6x more per HMAC on Node 24 (infra/crypto/key-object.ts).
  const key = createSecretKey(createHmac('sha256', secret).update('pc.rate-limit.client-address.v1').digest());
  return (ip) => createHmac('sha256', key).update(clientAddressBucket(ip)).digest('hex').slice(0, 32);
}

/** The client address as the limits bucket it (addressKeyer): an IPv6 /64, else the IPv4 address. */
export function clientAddressBucket(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return ip ?? 'unknown';
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  return addr.kind() === 'ipv6' ? `${(addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::/64` : addr.toString();
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`rate limiter gave no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Answers a refused request in its route's own format; the headers are `Retry-After` and the `RateLimit` pair. */
export type RateLimitRefusal = (req: Request, res: Response, headers: Record<string, string>) => void;

export interface RateLimiter {
  /** For the contract's routes: the limit named by the route's metadata; a refusal is the error envelope. */
  byRoute: RequestHandler;
  /**
   * For routes outside the contract (the hosted checkout's HTML pages and QR
   * images): a fixed limit, counted in the same buckets as the contract's
   * routes of that kind; `refuse` answers the 429 (an HTML page for a page).
   */
  fixed(kind: RateLimitKind, refuse: RateLimitRefusal): RequestHandler;
}

/**
 * Rate limits by route metadata (`meta({ rateLimit })`, else by `auth`), after
 * authentication because the credential is the bucket, or by a fixed kind for
 * the routes outside the contract. Counters live in PostgreSQL, so every
 * process shares them. Every limited route answers the `RateLimit-Policy` and
 * `RateLimit` headers; a refusal is 429 `RATE_LIMITED` with `Retry-After`.
 *
 * Fails open: when the counter store errs or is slow, the request goes ahead
 * uncounted and the failure is logged. Refusing every request because the
 * limiter is down would turn a limiter fault into an outage.
 */
export function createRateLimiter(deps: Pick<AppDeps, 'config' | 'db' | 'logger' | 'crypto'>): RateLimiter {
  const settings: RateLimitSettings = deps.config;
  const addressKey = addressKeyer(deps.crypto.blindIndexKey);
  let lastPurge = Date.now();
  let lastWarn = 0;

  const warn = (err: unknown, what: string) => {
    if (Date.now() - lastWarn < WARN_EVERY_MS) return;
    lastWarn = Date.now();
    const message = err instanceof Error ? err.message.replace(/postgres(ql)?:\/\/\S+/g, '[url]').slice(0, 200) : 'failed';
    deps.logger.warn({ err: { message } }, what);
  };

  const maybePurge = () => {
    if (Date.now() - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = Date.now();
    purgeExpiredWindows(deps.db).catch((err) => warn(err, 'rate limit purge failed'));
  };

  const giveBack = (buckets: CountedBucket[]) =>
    Promise.all(buckets.map((b) => giveBackHit(deps.db, b).catch((err) => warn(err, 'rate limit give-back failed'))));

  /** `failuresOnly` buckets keep the hit only when the credential was refused (401): a wrong guess. */
  const giveBackUnlessRefused = (res: Response, refundable: CountedBucket[]) => {
    if (!refundable.length) return;
    res.once('close', () => {
      if (res.statusCode !== 401) void giveBack(refundable);
    });
  };

  const enforce = (req: Request, res: Response, next: NextFunction, kind: RateLimitKind | null, refuse: RateLimitRefusal | null) => {
    if (!settings.RATE_LIMIT_ENABLED || !kind) return next();
    const p = req.principal;
    const caller: Caller = {
      apiKeyId: p?.kind === 'merchant' ? p.apiKeyId : undefined,
      deviceId: p?.kind === 'device' ? p.deviceId : undefined,
      addressKey: addressKey(req.ip),
    };
    const buckets = bucketsFor(kind, caller, settings);
    if (!buckets.length) return next();
    maybePurge();
    // Counted already by the API-key lookup's statement (countsApiKeyHit), for this very bucket: not again.
    const pre = req.apiKeyCount;
    const preCounted =
      pre && buckets.length === 1 && buckets[0]!.key === `api-key:${pre.apiKeyId}` ? Promise.resolve<CountedBucket[]>([{ ...buckets[0]!, hits: pre.hits, resetSeconds: pre.resetSeconds, windowEpoch: pre.windowEpoch }]) : null;
    withTimeout(preCounted ?? countHits(deps.db, buckets), STORE_TIMEOUT_MS).then(
      (counted) => {
        const headers = rateLimitHeaders(counted);
        const refundable = counted.filter((b) => b.failuresOnly);
        if (isLimited(counted)) {
          const exhausted = counted.filter((b) => b.hits > b.limit).map((b) => b.quota);
          deps.logger.info({ request_id: req.requestId, quotas: exhausted }, 'rate limited');
          // A refused request guessed nothing; given back before answering so the count is exact once the client sees the 429.
          return giveBack(refundable).then(() => (refuse ? refuse(req, res, headers) : next(new AppError('RATE_LIMITED', undefined, { headers }))));
        }
        giveBackUnlessRefused(res, refundable);
        for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
        next();
      },
      (err: unknown) => {
        warn(err, 'rate limiter unavailable: request allowed uncounted');
        next();
      },
    );
  };

  return {
    byRoute: (req, res, next) => {
      const meta = (req as Request & { tsRestRoute?: { metadata?: RouteMeta } }).tsRestRoute?.metadata;
      enforce(req, res, next, routeRateLimitKind(meta), null);
    },
    fixed: (kind, refuse) => (req, res, next) => enforce(req, res, next, kind, refuse),
  };
}
