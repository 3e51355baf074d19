import type { Request, RequestHandler } from 'express';
import type { AuthKind, RouteMeta } from '../../contract/common/meta.ts';
import { AppError } from '../../contract/common/errors.ts';
import { timingSafeEqualString } from '../infra/crypto/tokens.ts';
import type { ApiKeyPrincipal } from '../domain/brands/service.ts';
import type { Principal } from './context.ts';

/** Checks one kind of credential; returns the principal or throws AppError. */
export type Authenticator = (req: Request, token: string | null) => Promise<Principal>;

export function bearerToken(req: Request): string | null {
  const header = req.get('authorization');
  if (!header) return null;
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

const unauthorized = () => new AppError('UNAUTHORIZED');

/** `lookup`: domain/brands/service.ts `groupedApiKeyLookup`. */
export function merchantAuthenticator(lookup: (presented: string) => Promise<ApiKeyPrincipal | null>): Authenticator {
  return async (_req, token) => {
    if (!token) throw unauthorized();
    const found = await lookup(token);
    if (!found) throw unauthorized();
    return { kind: 'merchant', ...found };
  };
}

export function adminAuthenticator(adminToken: string): Authenticator {
  return async (_req, token) => {
    if (!token || !timingSafeEqualString(token, adminToken)) throw unauthorized();
    return { kind: 'admin' };
  };
}

const anonymous: Authenticator = async () => ({ kind: 'anonymous' });

/**
 * Authenticates by the route's metadata (`meta({ auth })`), never by URL.
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
        req.principal = principal;
        next();
      },
      next,
    );
  };
}
