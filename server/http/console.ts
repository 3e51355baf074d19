import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, type Router } from 'express';

/**
 * The operator console: a single-page app built by `npm install` (the `prepare`
 * script runs `vite build`) into admin-ui/dist and served here, on the service's
 * own port, so there is nothing else to deploy. It talks only to the admin API
 * (`/api/admin/v1`) with the session cookie.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CONSOLE_DIST = path.join(root, 'admin-ui', 'dist');

/**
 * Nothing but this origin's files: scripts and styles only from /admin/assets
 * (the build inlines nothing), images also as data: URLs (QR codes), calls only
 * to this origin; no framing, no <base>, forms post only here.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const pageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  next();
};

/** Shown when the build output is missing (dependencies installed with --ignore-scripts, or the build failed). */
const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Console not built</title></head>
<body>
<h1>The operator console is not built</h1>
<p>The service is running, but the console's files (admin-ui/dist) are missing. They are built by <code>npm install</code>;
if dependencies were installed with <code>--ignore-scripts</code>, build them with:</p>
<pre>npm run build:console</pre>
<p>then reload this page (no restart needed). The admin API at <code>/api/admin/v1</code> works without the console.</p>
</body>
</html>
`;

export function consoleRouter(opts: { distDir?: string } = {}): Router {
  const dist = opts.distDir ?? CONSOLE_DIST;
  const router = express.Router();
  // The HTML names the hashed asset files of one build: read it once it exists
  // (a build made while the service runs is picked up by the next request).
  let html: string | null = null;
  const indexHtml = () => {
    if (html === null && existsSync(path.join(dist, 'index.html'))) html = readFileSync(path.join(dist, 'index.html'), 'utf8');
    return html;
  };

  router.use('/admin', pageHeaders);
  // Content-hashed file names: a changed file is a new URL, so browsers may keep these for a year.
  router.use(
    '/admin/assets',
    express.static(path.join(dist, 'assets'), { immutable: true, maxAge: '365d', index: false, redirect: false, dotfiles: 'ignore', fallthrough: true }),
    (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      res.setHeader('Cache-Control', 'no-store');
      res.status(404).type('text/plain').send('Not found\n');
    },
  );
  // Every other /admin path is a client-side route: the same page, never cached
  // (it names the current build's assets, and a stale copy would load old code).
  router.get(['/admin', '/admin/{*rest}'], (_req, res) => {
    const page = indexHtml();
    res.setHeader('Cache-Control', 'no-store');
    if (!page) {
      res.status(503).setHeader('Retry-After', '60');
      res.type('html').send(NOT_BUILT);
      return;
    }
    res.type('html').send(page);
  });
  return router;
}
