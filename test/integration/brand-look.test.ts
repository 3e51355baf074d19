import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { changedTables, dbChecksum } from '../support/db-checksum.ts';
import { makePng, webpHeader } from '../support/images.ts';
import { adminRequest, auditRows, runCli } from './admin-support.ts';
import { consoleRequest, newOperator, session } from './console-support.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CONTENT_SECURITY_POLICY } from '../../server/http/checkout-pages/routes.ts';

/**
 * The checkout in the brand's look and the customer's language (README,
 * "Checkout languages and branding"): the admin API that sets the logo, colour
 * and support contact, with its refusals, and the pages and assets customers get.
 */

let t: TestContext;
let brandId: number;
let apiKey: string;

beforeAll(async () => {
  t = await startTestServer();
  ({ brandId, apiKey } = await t.createBrand('Corner Shop'));
  await seedGateway(t, 'bkash', { sort_order: 1, max_amount: '500000.00' });
});
afterAll(() => t?.close());

const b64 = (b: Buffer) => b.toString('base64');
const page = (path: string, headers: Record<string, string> = {}) => fetch(t.baseUrl + path, { headers, redirect: 'manual' });

describe('logo upload', () => {
  it('stores a PNG, serves it cacheable with its type and nosniff, and audits it', async () => {
    const png = makePng(96, 48);
    const res = await adminRequest(t, 'PUT', `/brands/${brandId}/logo`, { content_base64: b64(png) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ content_type: 'image/png', width: 96, height: 48, bytes: png.length });
    const url: string = res.body.data.url;
    expect(url).toMatch(/^\/checkout\/brand-logos\/[0-9a-f-]{36}\/[0-9a-f]{32}$/);

    const served = await page(url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('cache-control')).toContain('immutable');
    expect(served.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);

    const brand = await adminRequest(t, 'GET', `/brands/${brandId}`);
    expect(brand.body.data.logo).toMatchObject({ url, content_type: 'image/png' });
    const [audit] = await auditRows(t, 'brand.logo_set');
    expect(audit).toMatchObject({ target_id: String(brandId), after: { content_type: 'image/png', bytes: png.length } });

    // A new logo is a new URL; the old one is gone.
    const second = await adminRequest(t, 'PUT', `/brands/${brandId}/logo`, { content_base64: b64(webpHeader(64, 64)) });
    expect(second.status).toBe(200);
    expect(second.body.data.url).not.toBe(url);
    expect((await page(url)).status).toBe(404);
    expect((await page(second.body.data.url)).headers.get('content-type')).toBe('image/webp');
  });

  it.each([
    ['oversize', makePng(64, 64, [1, 2, 3], 70_000), 413, 'BRAND_LOGO_TOO_LARGE'],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'), 415, 'BRAND_LOGO_UNSUPPORTED_TYPE'],
    ['HTML', Buffer.from('<!doctype html><script>alert(1)</script>'), 415, 'BRAND_LOGO_UNSUPPORTED_TYPE'],
    ['too small', makePng(8, 8), 422, 'BRAND_LOGO_BAD_DIMENSIONS'],
  ])('refuses a %s logo with its code, nothing written', async (_name, bytes, status, code) => {
    const before = await dbChecksum(t);
    const res = await adminRequest(t, 'PUT', `/brands/${brandId}/logo`, { content_base64: b64(bytes) });
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body).toMatchObject({ success: false, errors: [{ code, field: 'content_base64' }] });
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);
  });

  it('refuses what is not base64, and an unknown brand', async () => {
    const bad = await adminRequest(t, 'PUT', `/brands/${brandId}/logo`, { content_base64: 'not base64!' });
    expect([bad.status, bad.body.errors[0].code]).toEqual([400, 'VALIDATION_ERROR']);
    const missing = await adminRequest(t, 'PUT', '/brands/987654/logo', { content_base64: b64(makePng(32, 32)) });
    expect([missing.status, missing.body.errors[0].code]).toEqual([404, 'BRAND_NOT_FOUND']);
  });

  it('removes the logo (audited), and a removed logo is no longer served', async () => {
    const set = await adminRequest(t, 'PUT', `/brands/${brandId}/logo`, { content_base64: b64(makePng(40, 40)) });
    const del = await adminRequest(t, 'DELETE', `/brands/${brandId}/logo`);
    expect([del.status, del.body.data.logo]).toEqual([200, null]);
    expect((await page(set.body.data.url)).status).toBe(404);
    expect((await auditRows(t, 'brand.logo_delete')).length).toBe(1);
  });
});

describe('colour and support contact', () => {
  it('sets them, audited, and refuses a bad colour with INVALID_BRAND_COLOR', async () => {
    const before = await dbChecksum(t);
    for (const color of ['red', '#12345', '#12345g', 'rgb(0,0,0)']) {
      const res = await adminRequest(t, 'PATCH', `/brands/${brandId}`, { primary_color: color });
      expect(res.status, color).toBe(400);
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'INVALID_BRAND_COLOR', field: 'primary_color' }] });
    }
    const badMail = await adminRequest(t, 'PATCH', `/brands/${brandId}`, { support_email: 'nope' });
    expect([badMail.status, badMail.body.errors[0].field]).toEqual([400, 'support_email']);
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);

    const ok = await adminRequest(t, 'PATCH', `/brands/${brandId}`, { primary_color: '#0A7D4F', support_phone: '+880 1700-000000', support_email: 'help@corner.example' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data).toMatchObject({ primary_color: '#0a7d4f', support_phone: '+880 1700-000000', support_email: 'help@corner.example' });
    const audits = await auditRows(t, 'brand.update');
    expect(audits.at(-1)).toMatchObject({ before: { primary_color: null }, after: { primary_color: '#0a7d4f', support_phone: '+880 1700-000000' } });
  });

  it('the checkout API hands a custom front end the look', async () => {
    await adminRequest(t, 'PUT', `/brands/${brandId}/logo`, { content_base64: b64(makePng(48, 48)) });
    const { payment_id } = await createPayment(t, apiKey);
    const res = await t.request('GET', `/api/checkout/v1/payments/${payment_id}`);
    expect(res.body.data.brand).toMatchObject({
      name: 'Corner Shop',
      primary_color: '#0a7d4f',
      button_text_color: '#ffffff',
      support_phone: '+880 1700-000000',
      support_email: 'help@corner.example',
    });
    expect(res.body.data.brand.logo_url).toMatch(/^\/checkout\/brand-logos\//);
  });

  it('serves the colour as a stylesheet with readable text on the button', async () => {
    const css = await page('/checkout/theme/ffeb3b.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toContain('text/css');
    const text = await css.text();
    expect(text).toContain('--accent:#ffeb3b;--accent-ink:#14171f;');
    expect((await page('/checkout/theme/FFEB3B.css')).status).toBe(404);
    expect((await page('/checkout/theme/zzzzzz.css')).status).toBe(404);
  });
});

describe('the page language', () => {
  it('Accept-Language by default, an explicit choice remembered in a cookie, Vary set', async () => {
    const { payment_id } = await createPayment(t, apiKey, { amount: '100000.00' });
    const path = `/checkout/${payment_id}`;

    const english = await page(path);
    expect(english.headers.get('vary')).toMatch(/Accept-Language.*Cookie/);
    const en = await english.text();
    expect(en).toContain('<html lang="en">');
    expect(en).toContain('100,000.00');

    const bangla = await (await page(path, { 'accept-language': 'bn-BD,bn;q=0.9,en;q=0.5' })).text();
    expect(bangla).toContain('<html lang="bn">');
    expect(bangla).toContain('১,০০,০০০.০০');
    expect(bangla).toContain('পরিশোধযোগ্য পরিমাণ');
    // The wallet's own steps, in Bangla, with its USSD code.
    expect(bangla).toContain('*247#');
    expect(bangla).toContain('&quot;Send Money&quot; বেছে নিন।');

    const chosen = await page(`${path}?lang=en`, { 'accept-language': 'bn' });
    const cookie = chosen.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^checkout_lang=en;.*Max-Age=31536000/i);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(await chosen.text()).toContain('<html lang="en">');
    // Remembered: the cookie wins over the header afterwards.
    const again = await (await page(path, { 'accept-language': 'bn', cookie: 'checkout_lang=en' })).text();
    expect(again).toContain('<html lang="en">');
    // An unknown choice is ignored.
    const unknown = await page(`${path}?lang=xx`, { 'accept-language': 'bn' });
    expect(unknown.headers.get('set-cookie')).toBeNull();
    expect(await unknown.text()).toContain('<html lang="bn">');
  });

  it('the not-found page is in the customer language too', async () => {
    const res = await page('/checkout/00000000-0000-4000-8000-000000000000', { 'accept-language': 'bn' });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('পেমেন্ট পাওয়া যায়নি');
  });
});

describe('the CLI', () => {
  it('brand:update sets the colour and contact, brand:logo uploads a file and refuses an SVG', async () => {
    const { brandId: id } = await t.createBrand('CLI Shop');
    const upd = await runCli(t, ['brand:update', '--brand', String(id), '--color', '#112233', '--support-phone', '01700000000', '--support-email', 'none']);
    expect(upd.code, upd.stderr).toBe(0);
    expect(upd.stdout).toContain('#112233');
    const dir = mkdtempSync(path.join(tmpdir(), 'logo-'));
    writeFileSync(path.join(dir, 'logo.png'), makePng(64, 64));
    writeFileSync(path.join(dir, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    const ok = await runCli(t, ['brand:logo', '--brand', String(id), '--file', path.join(dir, 'logo.png')]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('image/png');
    const svg = await runCli(t, ['brand:logo', '--brand', String(id), '--file', path.join(dir, 'logo.svg')]);
    expect(svg.code).not.toBe(0);
    expect(svg.stderr).toContain('BRAND_LOGO_UNSUPPORTED_TYPE');
  });
});

describe('who may change the look', () => {
  it('only owners; a brand-scoped operator is refused on its brand and sees no other brand; nothing written', async () => {
    const { brandId: other } = await t.createBrand('Other Shop');
    const op = await newOperator(t, 'operator', { brandIds: [brandId] });
    const s = await session(t, op.email);
    const before = await dbChecksum(t);
    const own = await consoleRequest(t, s, 'PUT', `/brands/${brandId}/logo`, { content_base64: b64(makePng(32, 32)) });
    expect([own.status, own.body.errors[0].code]).toEqual([403, 'FORBIDDEN']);
    const colour = await consoleRequest(t, s, 'PATCH', `/brands/${brandId}`, { primary_color: '#000000' });
    expect(colour.status).toBe(403);
    const foreign = await consoleRequest(t, s, 'PUT', `/brands/${other}/logo`, { content_base64: b64(makePng(32, 32)) });
    expect(foreign.status).not.toBe(200);
    expect(['FORBIDDEN', 'BRAND_NOT_FOUND']).toContain(foreign.body.errors[0].code);
    expect(changedTables(before, await dbChecksum(t)).filter((table) => table !== 'operator_sessions' && table !== 'rate_limits')).toEqual([]);

    const owner = await newOperator(t, 'owner');
    const so = await session(t, owner.email);
    const ok = await consoleRequest(t, so, 'PUT', `/brands/${other}/logo`, { content_base64: b64(makePng(32, 32)) });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const [audit] = (await auditRows(t, 'brand.logo_set')).filter((a) => a.brand_id === String(other));
    expect(audit!.actor).toBe(`operator:${owner.id} ${owner.email}`);
  });
});
