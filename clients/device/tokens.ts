import { AuthenticationError, PaycollectError } from '../shared/errors.ts';

/** What the app stores between runs (the SDK hands a new pair to `onTokens` on every rotation). */
export interface DeviceTokens {
  accessToken: string;
  refreshToken: string;
}

/**
 * The device must be paired again: the refresh token was rejected (expired,
 * already rotated, device revoked, fingerprint changed) or there are no tokens.
 * Show the pairing screen; retrying will not help.
 */
export class PairingRequiredError extends AuthenticationError {
  override name = 'PairingRequiredError';
}

export function pairingRequired(cause?: PaycollectError): PairingRequiredError {
  const base = 'The device must be paired again with a new pairing code';
  if (!cause) return new PairingRequiredError({ code: 'PAIRING_REQUIRED', message: `${base}: it holds no tokens.` });
  return new PairingRequiredError({
    code: cause.code,
    message: `${base}: the service rejected the refresh token (${cause.message}).`,
    errors: cause.errors,
    status: cause.status,
    requestId: cause.requestId,
    headers: cause.headers,
    body: cause.body,
    cause,
  });
}

function base64UrlDecode(part: string): string {
  const b64 = part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '=');
  // atob and TextDecoder exist in Node, browsers and React Native alike; Buffer does not.
  return new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
}

/**
 * The `exp` claim of a JWT in epoch milliseconds, read without verifying it (the
 * device cannot verify; it only wants to avoid a call it knows will be refused).
 * Null when the token is not a readable JWT or has no numeric `exp`.
 */
export function jwtExpiryMs(token: string): number | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const claims = JSON.parse(base64UrlDecode(parts[1])) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : null;
  } catch {
    return null;
  }
}

/**
 * True when the token is past (or within `marginMs` of) its `exp` on the
 * server's clock. `clockOffsetMs` = server time − device time, learned from the
 * `server_time` of token responses, so a phone with a wrong clock neither
 * refreshes on every call nor sends tokens it thinks are fresh but are not.
 */
export function isTokenExpired(token: string, nowMs: number, clockOffsetMs: number, marginMs: number): boolean {
  const exp = jwtExpiryMs(token);
  return exp !== null && nowMs + clockOffsetMs + marginMs >= exp;
}

/** Reads a token pair out of a pairing or refresh response's `data`. */
export function tokensFromData(data: unknown): { tokens: DeviceTokens; serverTime: number | null } | null {
  const d = data as { access_token?: unknown; refresh_token?: unknown; server_time?: unknown } | null;
  if (!d || typeof d.access_token !== 'string' || typeof d.refresh_token !== 'string') return null;
  const serverTime = typeof d.server_time === 'string' ? Date.parse(d.server_time) : NaN;
  return { tokens: { accessToken: d.access_token, refreshToken: d.refresh_token }, serverTime: Number.isNaN(serverTime) ? null : serverTime };
}
