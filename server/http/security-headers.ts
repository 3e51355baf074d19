import type { RequestHandler } from 'express';

/**
 * Prefixes whose answers carry personal data, credentials or a payment's state:
 * no browser, proxy or shared cache may keep a copy (a checkout page read on a
 * shared computer, an admin listing cached by a corporate proxy).
 */
const NO_STORE_PREFIXES = ['/api/', '/checkout/', '/sandbox/'];
/** The checkout's CSS and script are the same for everyone; they keep their cache lifetime. */
const CACHEABLE_PREFIX = '/checkout/assets/';

/**
 * Headers every response carries. `nosniff` everywhere, HSTS over TLS, so nothing we serve (a
 * JSON error echoing input, an asset) is ever run as a script or style of
 * another type; `no-store` on the routes above. Set before routing, so 404s,
 * 429s and errors carry them too.
 */
export const baseSecurityHeaders: RequestHandler = (req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Over TLS (directly, or per a trusted proxy's X-Forwarded-Proto): browsers
  // then refuse plain HTTP to this host for a year, so a network attacker cannot
  // strip TLS from a later visit. Never over plain HTTP (browsers ignore it
  // there, and a localhost console must keep working).
  if (req.secure) res.setHeader('Strict-Transport-Security', 'max-age=31536000');
  if (NO_STORE_PREFIXES.some((p) => req.path.startsWith(p)) && !req.path.startsWith(CACHEABLE_PREFIX)) res.setHeader('Cache-Control', 'no-store');
  next();
};
