import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Router } from 'express';
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
  router.get('/docs', (_req, res) => res.type('html').send(page));
  router.get('/docs/init.js', (_req, res) => res.type('application/javascript').send(init));
  router.use('/docs/assets', express.static(swaggerUiDir, { index: false, maxAge: '1h' }));
  return router;
}
