import type { ErrorCode } from './errors.ts';
import type { ApiKeyScope } from '../vocabulary.ts';

/**
 * Which credential a route takes. The auth middleware and the OpenAPI generator
 * both read this; nothing branches on URL strings.
 * - `merchant`: `Authorization: Bearer <API key>` of one brand
 * - `device`: `Authorization: Bearer <access JWT>` of one paired device
 * - `admin`: `Authorization: Bearer <admin token>`, or a console session cookie
 *   (`pc_admin_session`, plus `X-CSRF-Token` on every method but GET/HEAD)
 * - `operator`: a console session cookie only (the operator's own account:
 *   session, password, TOTP); the admin token names no operator
 * - `pairing`: `Authorization: Bearer <one-time pairing code>` (checked by the handler)
 * - `device-refresh`: refresh JWT in the body (checked by the handler)
 * - `checkout`: no credential; the unguessable payment id is the capability
 * - `none`: public (health, docs)
 */
export type AuthKind = 'merchant' | 'device' | 'admin' | 'operator' | 'pairing' | 'device-refresh' | 'checkout' | 'none';

/**
 * Which rate limit a route spends (server/http/rate-limit.ts; quotas are
 * configuration): `api-key` per API key, `device` per paired device, `pairing`
 * per client address plus the failed attempts of all addresses together,
 * `token-refresh`, `checkout` and `login` (console login) per client address.
 */
export type RateLimitKind = 'api-key' | 'device' | 'pairing' | 'token-refresh' | 'checkout' | 'login';

/**
 * What an admin route needs of the caller's role (console operators; the admin
 * token is an owner): `read` viewer and up, `operate` operator and up (day-to-day
 * work on payments, SMS, devices, deliveries, refunds), `own` owner only
 * (configuration, credentials, operators), `self` any signed-in operator acting
 * on their own account.
 */
export type Permission = 'read' | 'operate' | 'own' | 'self';

/**
 * The scope a merchant route needs of an API key that lists scopes: the route's
 * own `scope`, else `read` for GET and HEAD and `write` for the rest. The one
 * rule: the auth middleware enforces it and the OpenAPI document states it.
 */
export function merchantScopeOf(route: { method: string; metadata?: unknown }): ApiKeyScope {
  const own = (route.metadata as RouteMeta | undefined)?.scope;
  if (own) return own;
  return route.method === 'GET' || route.method === 'HEAD' ? 'read' : 'write';
}

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
  /** Admin routes: the role the caller needs (see `Permission`); set for every admin route in contract/admin/permissions.ts. */
  permission?: Permission;
  /** Merchant routes: the API key scope needed when it is not the method's default (see `merchantScopeOf`). */
  scope?: ApiKeyScope;
  /** OpenAPI tag. */
  tag?: string;
}

/** Typed helper so route metadata is checked where it is written. */
export const meta = <const M extends RouteMeta>(m: M): M => m;
