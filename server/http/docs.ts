import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, type Router } from 'express';
import { createRequire } from 'node:module';
import { sendCode } from './errors.ts';

// swagger-ui-dist ships no type declarations; resolve its folder directly.
const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const openapiFile = path.join(root, 'openapi', 'openapi.json');

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Payment collection API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: false });`;

/**
 * Only what the page loads. The package's folder also holds a stock index.html
 * (which loads an internet demo document and may be framed), an OAuth redirect
 * page and source maps: none of it is served.
 */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

/**
 * Scripts only from this origin (the bundle and init.js, no inline script, no
 * eval); the page fetches only /openapi.json; it may not be framed (no
 * clickjacking of "Try it out"). Inline styles are allowed because Swagger UI
 * sets style attributes in the markup it renders; styles cannot run script.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

const docsHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  next();
};

/**
 * The published OpenAPI document and an interactive reference page served from
 * the swagger-ui-dist package (no CDN: the machine may be offline).
 */
export function docsRouter(): Router {
  const router = express.Router();
  // Read once: the document is generated and committed, it does not change while running.
  const document = existsSync(openapiFile) ? readFileSync(openapiFile, 'utf8') : null;
  router.get('/openapi.json', (req, res) => {
    if (!document) return sendCode(req, res, 'SERVICE_UNAVAILABLE', 'OpenAPI document not generated; run npm run openapi');
    res.type('application/json').send(document);
  });
  router.use('/docs', docsHeaders);
  router.get('/docs', (_req, res) => res.type('html').send(page));
  router.get('/docs/init.js', (_req, res) => res.type('application/javascript').send(init));
  router.get('/docs/assets/:file', (req, res, next) => {
    const file = String(req.params.file);
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return next();
    res.sendFile(path.join(swaggerUiDir, file), { maxAge: '1h', headers: { 'Content-Type': type } }, (err) => err && next(err));
  });
  return router;
}
