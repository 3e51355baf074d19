import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { CONSOLE_CSP, CONSOLE_DIST, consoleRouter } from '../../server/http/console.ts';

/**
 * The operator console's files as the service serves them at /admin: the page
 * under the strict CSP and never cached, hashed assets cached for a year,
 * client-side routes answered with the same page, and a clear 503 when the
 * build output is missing.
 */

let t: TestContext;

beforeAll(async () => {
  if (!existsSync(path.join(CONSOLE_DIST, 'index.html'))) throw new Error('admin-ui/dist is missing: run `npm run build:console` (npm install does it)');
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const get = (p: string, init?: RequestInit) => fetch(t.baseUrl + p, init);

describe('/admin', () => {
  it('answers the page with the strict CSP, no-store, and nothing inline', async () => {
    const res = await get('/admin');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("style-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toContain('<div id="root"></div>');
    // Every script has a src under /admin/assets; no <style> element, no style attribute.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/admin\/assets\/[^"]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/<style\b|\sstyle=/);
    expect(html).toMatch(/<link rel="stylesheet"[^>]*href="\/admin\/assets\/[^"]+\.css"/);
  });

  it('serves hashed assets with a year of immutable cache, and unknown assets as a plain 404', async () => {
    const html = await (await get('/admin/')).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const a of assets) {
      const res = await get(a);
      expect(res.status, a).toBe(200);
      expect(res.headers.get('cache-control'), a).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-type'), a).toMatch(a.endsWith('.js') ? /javascript/ : /text\/css/);
      expect((await res.text()).length).toBeGreaterThan(100);
    }
    const missing = await get('/admin/assets/index-nothere.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(missing.headers.get('cache-control')).toBe('no-store');
  });

  it('answers client-side routes with the same page', async () => {
    const page = await (await get('/admin')).text();
    for (const p of ['/admin/', '/admin/review', '/admin/payments/12', '/admin/devices?presence=online']) {
      const res = await get(p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-security-policy'), p).toBe(CONSOLE_CSP);
      expect(res.headers.get('cache-control'), p).toBe('no-store');
      expect(await res.text(), p).toBe(page);
    }
    // Not a console path: the ordinary JSON 404.
    expect((await get('/administrator')).status).toBe(404);
    // The admin API is not shadowed by the console.
    expect((await get('/api/admin/v1/brands')).status).toBe(401);
  });
});

describe('/admin without a build', () => {
  let server: Server;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pc-console-'));
    const app = express();
    app.use(consoleRouter({ distDir: dir }));
    server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('is a 503 page that says how to build it, under the same CSP', async () => {
    for (const p of ['/admin', '/admin/review']) {
      const res = await fetch(base + p);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await res.text();
      expect(body).toContain('npm run build:console');
      expect(body).not.toMatch(/<script|<style|\sstyle=/);
    }
  });
});
