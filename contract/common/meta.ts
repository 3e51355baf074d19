import type { ErrorCode } from './errors.ts';

/**
 * Which credential a route takes. The auth middleware and the OpenAPI generator
 * both read this; nothing branches on URL strings.
 * - `merchant`: `Authorization: Bearer <API key>` of one brand
 * - `device`: `Authorization: Bearer <access JWT>` of one paired device
 * - `admin`: `Authorization: Bearer <admin token>`
 * - `pairing`: `Authorization: Bearer <one-time pairing code>` (checked by the handler)
 * - `device-refresh`: refresh JWT in the body (checked by the handler)
 * - `checkout`: no credential; the unguessable payment id is the capability
 * - `none`: public (health, docs)
 */
export type AuthKind = 'merchant' | 'device' | 'admin' | 'pairing' | 'device-refresh' | 'checkout' | 'none';

/**
 * Which rate limit a route spends (server/http/rate-limit.ts; quotas are
 * configuration): `api-key` per API key, `device` per paired device, `pairing`
 * per client address plus the failed attempts of all addresses together,
 * `token-refresh` and `checkout` per client address.
 */
export type RateLimitKind = 'api-key' | 'device' | 'pairing' | 'token-refresh' | 'checkout';

export interface RouteMeta {
  auth: AuthKind;
  /**
   * Unset: follows `auth` (merchant → `api-key`, device → `device`, pairing →
   * `pairing`, device-refresh → `token-refresh`, checkout → `checkout`; admin and
   * none are not limited). `false`: never limited.
   */
  rateLimit?: RateLimitKind | false;
  /**
   * Error codes the route can answer with, beyond those of its surface, credential
   * and rate limit: declared once, here. Its error responses, one per status, are
   * built from them (responses.ts), so the server, the OpenAPI document and the
   * SDK types all know exactly which codes each status can carry.
   */
  errors?: readonly ErrorCode[];
  /** POST routes that honour `Idempotency-Key`. */
  idempotent?: boolean;
  /** OpenAPI tag. */
  tag?: string;
}

/** Typed helper so route metadata is checked where it is written. */
export const meta = <const M extends RouteMeta>(m: M): M => m;
