import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, type Router } from 'express';
import { sendCode } from './errors.ts';
import { CompressedBody } from './docs-compress.ts';

// The renderer is the standalone browser build of @scalar/api-reference, served
// from node_modules (no CDN: the machine may be offline). Chosen over Swagger UI
// because it renders x-tagGroups (merchant API first), x-codeSamples and has search.
// The package exports no package.json: its main entry is dist/index.js, one level below the root.
const scalarDir = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('@scalar/api-reference'))), '..');
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const openapiFile = path.join(root, 'openapi', 'openapi.json');

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Payment collection API reference</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <!-- Not id="api-reference": the bundle auto-mounts a second, unconfigured copy on that id. -->
  <div id="reference"></div>
  <script src="/docs/assets/scalar.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

/**
 * The renderer's theme, through its public `customCss` setting (its CSS
 * variables and one rule), so that every text meets WCAG AA contrast (4.5:1) on every
 * background the theme draws it on (background-1 to -3), in the light and the
 * dark mode: the default greys and method colours are lighter than that.
 */
const themeCss = `
.light-mode {
  --scalar-color-2: #5c5c5c;
  --scalar-color-3: #636363;
  --scalar-color-accent: #0068b3;
  --scalar-color-green: #03704b;
  --scalar-color-red: #c00005;
  --scalar-color-yellow: #7a5d00;
  --scalar-color-blue: #0065a3;
  --scalar-color-orange: #b03c00;
  --scalar-color-purple: #5203d1;
  --scalar-color-query: #00676b;
}
.dark-mode {
  --scalar-color-2: #b4b4b4;
  --scalar-color-3: #9c9c9c;
  --scalar-color-green: #00c27a;
  --scalar-color-red: #ff6b6b;
  --scalar-color-yellow: #ffc90d;
  --scalar-color-blue: #4db2ff;
  --scalar-color-orange: #ff8d4d;
  --scalar-color-purple: #b98cff;
}
/* A region that scrolls must be reachable by keyboard; these hold nothing
   focusable, so they do not scroll: code wraps, a tag's operation list grows. */
.scalar-app .hljs.custom-scroll,
.scalar-app .hljs.custom-scroll * {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
.scalar-app .endpoints * {
  white-space: normal;
  overflow-wrap: anywhere;
}
.scalar-app .hljs.custom-scroll,
.scalar-app .endpoints,
.scalar-app .scalar-card-content.custom-scroll:has(> .endpoints) {
  max-height: none;
  overflow: visible;
}
/* A code block's copy button names itself in a screen-reader-only label that is
   display:none until the block is hovered or focused, so it has no name until
   then: that label is shown (it stays visually hidden by its sr-only parent). */
.scalar-app .scalar-code-copy .sr-only > .hidden {
  display: inline;
}
`;

// Everything that would reach the internet is off: default web fonts, telemetry,
// the hosted client and proxy. "Try it" calls this origin (the document's server is '/').
const init = `Scalar.createApiReference('#reference', ${JSON.stringify({
  customCss: themeCss,
  // A collapsed tag's button reads "Show More" but is labelled "Show all <tag> endpoints":
  // a label must contain the visible text (speech input users say what they see).
  localization: { translations: { actions: { showMore: 'Show all' } } },
  sources: [{ url: '/openapi.json', slug: 'api', title: 'Payment collection API', default: true }],
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  persistAuth: false,
  documentDownloadType: 'json',
  defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
  agent: { disabled: true },
})});
// Each operation's "Example Responses" card is a region named by its status tabs
// (aria-labelledby), so two operations with the same statuses drawn at once are two
// landmarks with one name (axe: landmark-unique). Each card is named after its
// operation instead, when it is drawn; the renderer sets the attribute once per card.
new MutationObserver(() => {
  for (const card of document.querySelectorAll('.response-card[role="region"][aria-labelledby]')) {
    let el = card.parentElement;
    while (el && !/\\/(get|post|put|patch|delete)\\//i.test(el.id || '')) el = el.parentElement;
    if (!el) continue;
    const m = /\\/(get|post|put|patch|delete)(\\/.*)$/i.exec(el.id);
    card.removeAttribute('aria-labelledby');
    card.setAttribute('aria-label', 'Example responses of ' + m[1].toUpperCase() + ' ' + m[2]);
  }
}).observe(document.body, { childList: true, subtree: true });\n`;

/**
 * Only what the page loads. The package also holds source maps, an ES module
 * build and other files: none of it is served.
 */
const ASSETS: Record<string, { file: string; type: string }> = {
  'scalar.js': { file: 'dist/browser/standalone.js', type: 'application/javascript; charset=utf-8' },
};

/**
 * Scripts only from this origin (the bundle and init.js, no inline script, no
 * eval); the page fetches only this origin (/openapi.json and "Try it" calls);
 * it may not be framed (no clickjacking of "Try it"). Inline styles are allowed
 * because the renderer injects its stylesheet as a <style> element and sets
 * style attributes; styles cannot run script.
 */
const DOCS_CONTENT_SECURITY_POLICY = [
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
 * The published OpenAPI document and an interactive reference page, both sent
 * brotli/gzip-compressed when the client accepts it.
 */
export function docsRouter(): Router {
  const router = express.Router();
  // Read once: the document is generated and committed, it does not change while running.
  // Served without the committed file's indentation (a third smaller before compression).
  const document = existsSync(openapiFile) ? new CompressedBody(JSON.stringify(JSON.parse(readFileSync(openapiFile, 'utf8'))), 'application/json; charset=utf-8') : null;
  const assets = new Map<string, CompressedBody>();
  const asset = (name: string) => {
    let body = assets.get(name);
    if (!body) {
      const a = ASSETS[name]!;
      body = new CompressedBody(readFileSync(path.join(scalarDir, a.file)), a.type);
      assets.set(name, body);
    }
    return body;
  };
  const html = new CompressedBody(page, 'text/html; charset=utf-8');
  const initJs = new CompressedBody(init, 'application/javascript; charset=utf-8');

  router.get('/openapi.json', (req, res, next) => {
    if (!document) return sendCode(req, res, 'SERVICE_UNAVAILABLE', 'OpenAPI document not generated; run npm run openapi');
    document.send(req, res, 'no-cache').catch(next);
  });
  router.use('/docs', docsHeaders);
  router.get('/docs', (req, res, next) => void html.send(req, res, 'no-cache').catch(next));
  router.get('/docs/init.js', (req, res, next) => void initJs.send(req, res, 'no-cache').catch(next));
  router.get('/docs/assets/:file', (req, res, next) => {
    const file = String(req.params.file);
    if (!Object.hasOwn(ASSETS, file)) return next();
    asset(file).send(req, res, 'public, max-age=3600').catch(next);
  });
  return router;
}
