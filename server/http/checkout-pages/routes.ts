import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { AppError } from '../../../contract/common/errors.ts';
import type { AppDeps } from '../../deps.ts';
import { loadCheckout, type CheckoutLinks } from '../../domain/checkout/view.ts';
import { decideSandboxSession, findSandboxSession, type SandboxDecision } from '../../domain/sandbox/sessions.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { ASSETS_PATH, THEME_PATH, brandDisabledPage, errorPage, notFoundPage, tooManyRequestsPage } from './layout.ts';
import { renderCheckoutPage } from './page.ts';
import { findServedLogo, HEX_COLOR_RE, themeCss } from '../../domain/brands/look.ts';
import { pageLanguage, pageTimeZone } from './i18n.ts';
import { renderSandboxPage } from './sandbox-page.ts';
import { paymentLinkPages } from './link-routes.ts';

const assetsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assets');

/**
 * Everything on these pages comes from our own origin: no inline script or
 * style, no CDN, no frames. `form-action 'self'` keeps the sandbox's forms
 * from being pointed elsewhere; `no-referrer` keeps the payment id (the page's
 * only credential) out of the merchant's and anyone else's logs.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  next();
};

function sendPage(res: Response, status: number, page: string): void {
  res.status(status).setHeader('Cache-Control', 'no-store').type('html').send(page);
}

/** HTML routes answer HTML, also when something breaks (the JSON envelope is for /api). */
function page(deps: AppDeps, fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req, res) => {
    fn(req, res).catch((err: unknown) => {
      deps.logger.error({ request_id: req.requestId, err: { message: err instanceof Error ? err.message : String(err) } }, 'checkout page failed');
      if (!res.headersSent) sendPage(res, 500, errorPage(pageLanguage(req), req.requestId));
    });
  };
}

const param = (req: Request, name: string): string => String(req.params[name] ?? '');

/**
 * The hosted checkout page, its assets, and the sandbox gateway's pages. Mount before the JSON 404 handler.
 *
 * Every page that reads or writes the database spends the checkout JSON routes'
 * per-address limit (`RATE_LIMIT_CHECKOUT`, the same buckets): a payment link's
 * visit creates a payment, and none of these pages takes a credential that could
 * be limited instead. A refusal is 429 with the limiter's headers and an HTML page,
 * like every other answer here; the static assets are not counted.
 */
export function checkoutPages(deps: AppDeps, limiter: Pick<RateLimiter, 'fixed'>): Router {
  const links: CheckoutLinks = { publicBaseUrl: deps.config.PUBLIC_BASE_URL, sandboxSecret: deps.secrets.sandboxCallbackSecret };
  const router = express.Router();
  router.use(['/checkout', '/sandbox', '/pay'], securityHeaders);
  router.use(ASSETS_PATH, express.static(assetsDir, { index: false, fallthrough: true, maxAge: '1h', dotfiles: 'deny' }));
  const limited = limiter.fixed('checkout', (_req, res, headers) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    sendPage(res, 429, tooManyRequestsPage(pageLanguage(_req, res), headers['Retry-After']));
  });

  // The brand colour as a stylesheet: made from the colour in the path alone (no database), so it is cached for good.
  router.get(`${THEME_PATH}/:color.css`, (req, res) => {
    const color = `#${param(req, 'color')}`;
    if (!HEX_COLOR_RE.test(color) || color !== color.toLowerCase()) return sendPage(res, 404, notFoundPage(pageLanguage(req, res)));
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.type('text/css').send(themeCss(color));
  });

  // The brand's logo: its hash is in the path, so a new logo is a new URL and this one never changes.
  router.get(
    '/checkout/brand-logos/:brand_uuid/:hash',
    limited,
    page(deps, async (req, res) => {
      const logo = await findServedLogo(req.db, param(req, 'brand_uuid'), param(req, 'hash'));
      if (!logo) return sendPage(res, 404, notFoundPage(pageLanguage(req, res)));
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.setHeader('Content-Type', logo.contentType);
      res.setHeader('Content-Disposition', 'inline');
      res.status(200).end(logo.content);
    }),
  );

  router.get(
    '/checkout/:payment_id',
    limited,
    page(deps, async (req, res) => {
      const lang = pageLanguage(req, res);
      try {
        const { view, cancelUrl, timeZone } = await loadCheckout(req.db, param(req, 'payment_id'), links);
        sendPage(res, 200, renderCheckoutPage(view, { lang, cancelUrl, timeZone: pageTimeZone(timeZone) }));
      } catch (err) {
        if (err instanceof AppError && err.code === 'PAYMENT_NOT_FOUND') return sendPage(res, 404, notFoundPage(lang));
        if (err instanceof AppError && err.code === 'BRAND_DISABLED') return sendPage(res, 403, brandDisabledPage(lang));
        throw err;
      }
    }),
  );

  router.get(
    '/sandbox/pay/:token',
    limited,
    page(deps, async (req, res) => {
      const lang = pageLanguage(req, res);
      const token = param(req, 'token');
      const session = await findSandboxSession(req.db, token);
      if (!session) return sendPage(res, 404, notFoundPage(lang));
      if (!session.brandActive) return sendPage(res, 403, brandDisabledPage(lang));
      sendPage(res, 200, renderSandboxPage(lang, session, token));
    }),
  );

  const decide = (decision: SandboxDecision) =>
    page(deps, async (req, res) => {
      const token = param(req, 'token');
      const result = await decideSandboxSession(req.db, token, decision);
      if (result.kind === 'not_found') return sendPage(res, 404, notFoundPage(pageLanguage(req, res)));
      if (result.kind === 'brand_disabled') return sendPage(res, 403, brandDisabledPage(pageLanguage(req, res)));
      // Expired: back to the sandbox page, which says so. Otherwise back to the
      // merchant's checkout, like a real gateway's return redirect.
      const to = result.kind === 'expired' ? `/sandbox/pay/${token}` : `/checkout/${result.session.paymentId}`;
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, to);
    });
  router.post('/sandbox/pay/:token/approve', limited, decide({ outcome: 'approved' }));
  router.post('/sandbox/pay/:token/decline', limited, decide({ outcome: 'declined', reason: 'The customer declined on the sandbox page' }));

  paymentLinkPages(deps, router, { page, sendPage, limited });

  router.use(['/checkout', '/sandbox', '/pay'], (req, res) => sendPage(res, 404, notFoundPage(pageLanguage(req, res))));
  return router;
}
