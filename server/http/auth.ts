import type { Request, RequestHandler } from 'express';
import { merchantScopeOf, type AuthKind, type Permission, type RouteMeta } from '../../contract/common/meta.ts';
import { AppError } from '../../contract/common/errors.ts';
import { CSRF_HEADER, sessionCookieName } from '../../contract/admin/session.ts';
import { type OperatorRole } from '../../contract/vocabulary.ts';
import { timingSafeEqualString } from '../infra/crypto/tokens.ts';
import type { ApiKeyCount, ApiKeyPrincipal } from '../domain/brands/service.ts';
import { csrfMatches, findSession, purgeExpiredSessions, type SessionPolicy } from '../domain/operators/service.ts';
import type { AdminPrincipal, Principal } from './context.ts';
import type { Db } from '../domain/db.ts';

/** Checks one kind of credential; returns the principal or throws AppError. */
export type Authenticator = (req: Request, token: string | null) => Promise<Principal>;

export function bearerToken(req: Request): string | null {
  const header = req.get('authorization');
  if (!header) return null;
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/** The value of one cookie of the request (no cookie-parser: this is the only cookie the service reads). */
export function cookieValue(req: Request, name: string): string | null {
  const header = req.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : null;
    }
  }
  return null;
}

const unauthorized = () => new AppError('UNAUTHORIZED');

/**
 * `lookup`: domain/brands/service.ts `apiKeyLookup`. `countsApiKey`
 * (http/rate-limit.ts `countsApiKeyHit`): whether the route's rate limit is
 * the per-key quota; such a request is counted by the lookup's own statement and
 * the count is left on the request for the limiter (`req.apiKeyCount`).
 */
export function merchantAuthenticator(
  lookup: (presented: string, opts?: { count?: boolean }) => Promise<{ principal: ApiKeyPrincipal | null; counted: ApiKeyCount | null }>,
  countsApiKey: (req: Request) => boolean = () => false,
): Authenticator {
  return async (req, token) => {
    if (!token) throw unauthorized();
    const found = await lookup(token, { count: countsApiKey(req) });
    if (!found.principal) throw unauthorized();
    if (found.counted) req.apiKeyCount = { apiKeyId: found.principal.apiKeyId, ...found.counted };
    return { kind: 'merchant', ...found.principal };
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);
/** Expired sessions are purged by whichever process sees console traffic, at most this often. */
const PURGE_EVERY_MS = 60_000;

export interface ConsoleAuth {
  db: Db;
  policy: SessionPolicy;
  csrfToken: (sessionToken: string) => string;
}

/**
 * The console session of the request's cookie: live, and on every method but
 * GET/HEAD carrying its CSRF token (`X-CSRF-Token`); a cross-site page can make
 * the browser send the cookie (SameSite=Strict aside) but cannot read the token.
 */
export function sessionAuthenticator(consoleAuth: ConsoleAuth): Authenticator {
  let lastPurge = 0;
  return async (req) => {
    // Only the name this server sets for the request's scheme: over TLS an
    // unprefixed cookie could have been planted by a sibling subdomain or plain HTTP.
    const token = cookieValue(req, sessionCookieName(req.secure));
    if (!token) throw unauthorized();
    const em = consoleAuth.db;
    if (Date.now() - lastPurge > PURGE_EVERY_MS) {
      lastPurge = Date.now();
      void purgeExpiredSessions(consoleAuth.db, consoleAuth.policy).catch(() => undefined);
    }
    const found = await findSession(em, token, consoleAuth.policy);
    if (!found) throw unauthorized();
    if (!SAFE_METHODS.has(req.method) && !csrfMatches(consoleAuth.csrfToken(token), req.get(CSRF_HEADER))) throw new AppError('CSRF_TOKEN_INVALID');
    const op = found.operator;
    return {
      kind: 'admin',
      role: op.role,
      brandIds: op.role === 'owner' ? null : (op.brandIds ?? null),
      operator: { id: op.id, email: op.email, sessionId: found.sessionId },
    } satisfies AdminPrincipal;
  };
}

/**
 * Admin routes: the admin token (automation and the CLI: an owner over every
 * brand) when an `Authorization` header is sent, otherwise the console session.
 */
export function adminAuthenticator(adminToken: string, session?: Authenticator): Authenticator {
  return async (req, token) => {
    if (token || req.get('authorization') || !session) {
      if (!token || !timingSafeEqualString(token, adminToken)) throw unauthorized();
      return { kind: 'admin', role: 'owner', brandIds: null, operator: null } satisfies AdminPrincipal;
    }
    return session(req, token);
  };
}

const granted: Record<OperatorRole, ReadonlySet<Permission>> = {
  viewer: new Set(['read', 'self']),
  operator: new Set(['read', 'operate', 'self']),
  owner: new Set(['read', 'operate', 'own', 'self']),
};

/** Whether the principal's role covers the route's permission (only admin principals have a role). */
export function permits(principal: Principal, permission: Permission | undefined): boolean {
  if (principal.kind !== 'admin' || permission === undefined) return true;
  return granted[principal.role].has(permission);
}

const anonymous: Authenticator = async () => ({ kind: 'anonymous' });

/**
 * Authenticates by the route's metadata (`meta({ auth })`), never by URL, then
 * checks the route's `permission` against an admin caller's role.
 * Kinds whose credential is checked inside the handler (pairing code, refresh
 * token) and public routes pass through as anonymous.
 */
export function authMiddleware(authenticators: Partial<Record<AuthKind, Authenticator>>): RequestHandler {
  return (req, _res, next) => {
    const route = (req as Request & { tsRestRoute?: { metadata?: RouteMeta } }).tsRestRoute;
    const kind = route?.metadata?.auth;
    if (!kind) return next(new Error('route without auth metadata'));
    const authenticate = authenticators[kind] ?? (kind === 'none' || kind === 'checkout' || kind === 'pairing' || kind === 'device-refresh' ? anonymous : undefined);
    if (!authenticate) return next(unauthorized());
    authenticate(req, bearerToken(req)).then(
      (principal) => {
        if (!permits(principal, route?.metadata?.permission)) return next(new AppError('FORBIDDEN', 'Your role may not do this'));
        if (principal.kind === 'merchant' && principal.scopes !== null) {
          const scope = merchantScopeOf({ method: req.method, metadata: route?.metadata });
          if (!principal.scopes.includes(scope)) return next(new AppError('INSUFFICIENT_SCOPE', `This API key lacks the \`${scope}\` scope; it has ${principal.scopes.map((s) => `\`${s}\``).join(', ')}`));
        }
        req.principal = principal;
        next();
      },
      next,
    );
  };
}
