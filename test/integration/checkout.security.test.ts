import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, type CreatePaymentOptions } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { CONTENT_SECURITY_POLICY } from '../../server/http/checkout-pages/routes.ts';

/**
 * The checkout pages are public and show merchant-controlled text: everything
 * interpolated is escaped, nothing runs that is not our own script file, the
 * payment id does not leak through referrers, and HTML routes answer HTML
 * (also their 404s) while the JSON routes keep the envelope.
 */

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;

const EVIL_BRAND = `<script>alert("brand")</script> & "Sons" <img src=x onerror=alert(1)>`;
const EVIL_REF = `<img src=x onerror=alert('ref')>`;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey } = await t.createBrand(EVIL_BRAND, { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash', {
    name: 'bKash <b>bold</b>',
    instructions: '</li><script src="https://cdn.example/x.js"></script>',
    receiving_account: '017"><svg onload=alert(1)>',
  });
  sandbox = await seedGateway(t, 'sandbox');
});
afterAll(() => t?.close());

const newPayment = async (body: CreatePaymentOptions = {}): Promise<string> =>
  (await createPayment(t, apiKey, { amount: '750.00', reference: EVIL_REF, success_url: 'https://shop.example/ok?a=1&b="2"', ...body })).payment_id;

async function page(path: string): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(t.baseUrl + path);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const OUR_ELEMENTS = new Set(
  'html head meta title link script body main header div p h1 h2 section span time footer button details summary dl dt dd ol li strong form label input a noscript nav img'.split(' '),
);

/**
 * Escaped text has no literal `<`, so every `<` starts a tag we wrote: only our
 * own elements, no inline handlers or styles, and every script is our file.
 */
function expectNoInjectedMarkup(text: string) {
  const tags = [...text.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g)];
  expect(tags.length).toBeGreaterThan(10);
  for (const [tag, name] of tags) {
    expect(OUR_ELEMENTS.has(name!.toLowerCase()), tag).toBe(true);
    // Text inside a quoted attribute value is data (a `"` in it is escaped as &quot;, so an
    // injected quote would end the value early and put what follows outside, where it is checked).
    expect(tag.replace(/"[^"]*"/g, '""')).not.toMatch(/\son[a-z]+\s*=|\sstyle\s*=/i);
    if (name === 'script') expect(tag).toBe('<script src="/checkout/assets/checkout.js" defer>');
  }
  expect(text).not.toContain('cdn.example/x.js"></script>');
}

describe('HTML escaping', () => {
  it('brand names, references, gateway names, accounts and instructions render inert', async () => {
    const id = await newPayment();
    const { status, text } = await page(`/checkout/${id}`);
    expect(status).toBe(200);
    expectNoInjectedMarkup(text);
    expect(text).toContain('&lt;script&gt;alert(&quot;brand&quot;)&lt;/script&gt; &amp; &quot;Sons&quot; &lt;img src=x onerror=alert(1)&gt;');
    expect(text).toContain('&lt;img src=x onerror=alert(&#39;ref&#39;)&gt;');
    expect(text).toContain('bKash &lt;b&gt;bold&lt;/b&gt;');
    expect(text).toContain('017&quot;&gt;&lt;svg onload=alert(1)&gt;');
    expect(text).toContain('&lt;/li&gt;&lt;script src=&quot;https://cdn.example/x.js&quot;&gt;&lt;/script&gt;');
    // The title carries the brand too.
    expect(text).toMatch(/<title>Pay &lt;script&gt;/);
  });

  it('the waiting, completed and expired pages and the sandbox page escape too', async () => {
    const waiting = await newPayment();
    await t.request('POST', `/api/checkout/v1/payments/${waiting}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'ESC0000001' } });
    expectNoInjectedMarkup((await page(`/checkout/${waiting}`)).text);

    const expired = await newPayment({ cancel_url: 'https://shop.example/back?x="y"' });
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [expired]);
    const exp = await page(`/checkout/${expired}`);
    expectNoInjectedMarkup(exp.text);
    expect(exp.text).toContain('Payment link has expired');
    expect(exp.text).toContain('href="https://shop.example/back?x=%22y%22"');

    const auto = await newPayment();
    const started = await t.request('POST', `/api/checkout/v1/payments/${auto}/transactions`, { body: { gateway: sandbox.code } });
    const token = started.body.data.redirect_url.split('/sandbox/pay/')[1];
    const sb = await page(`/sandbox/pay/${token}`);
    expect(sb.status).toBe(200);
    expect(sb.text).not.toMatch(/<script/i);
    expect(sb.text).toContain('&lt;script&gt;alert(&quot;brand&quot;)');
  });

  it('a success URL is only ever an http(s) link, attribute-escaped', async () => {
    const id = await newPayment();
    await t.request('POST', `/api/checkout/v1/payments/${id}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'ESC0000002' } });
    await t.sql(`UPDATE transactions SET status = 'completed', completed_at = now() WHERE intent_id = (SELECT id FROM payment_intents WHERE uuid = $1)`, [id]);
    await t.sql(`UPDATE payment_intents SET status = 'completed', completed_at = now() WHERE uuid = $1`, [id]);
    const done = await page(`/checkout/${id}`);
    expect(done.text).toContain(`data-redirect-url="https://shop.example/ok?a=1&amp;b=%222%22&amp;payment_id=${id}"`);
    // Stored directly (bypassing the API's validation): a javascript: URL never becomes a link.
    await t.sql(`UPDATE payment_intents SET success_url = 'javascript:alert(1)' WHERE uuid = $1`, [id]);
    const evil = await page(`/checkout/${id}`);
    expect(evil.text).not.toContain('javascript:');
    expect(evil.text).toContain('data-redirect-url=""');
  });
});

describe('headers of the HTML pages', () => {
  it('a strict CSP, no referrer, no framing, no sniffing, no caching', async () => {
    const id = await newPayment();
    for (const path of [`/checkout/${id}`, '/checkout/not-a-payment', '/sandbox/pay/unknown']) {
      const { headers } = await page(path);
      expect(headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(headers.get('referrer-policy')).toBe('no-referrer');
      expect(headers.get('x-frame-options')).toBe('DENY');
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('cache-control')).toBe('no-store');
      expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
    }
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
    );
  });

  it('assets come from our own origin with their types', async () => {
    const js = await fetch(`${t.baseUrl}/checkout/assets/checkout.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(js.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    const css = await fetch(`${t.baseUrl}/checkout/assets/checkout.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    const text = await css.text();
    // No CDN, no web fonts from elsewhere.
    expect(text).not.toMatch(/@import|url\(\s*['"]?https?:/i);
    const missing = await fetch(`${t.baseUrl}/checkout/assets/../../../package.json`);
    expect(missing.status).toBe(404);
  });
});

describe('HTML routes answer HTML, JSON routes keep the envelope', () => {
  it('an unknown or malformed payment id is a plain HTML 404', async () => {
    for (const path of ['/checkout/6a1f1c52-9d0e-4d43-9b8e-6c1a2f3b4c5d', '/checkout/nope', '/checkout/a/b', '/sandbox/pay/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/sandbox/elsewhere']) {
      const res = await page(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('Payment not found');
      expect(res.text).not.toContain('"success"');
    }
    const forged = await fetch(`${t.baseUrl}/sandbox/pay/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/approve`, { method: 'POST' });
    expect(forged.status).toBe(404);
    expect(forged.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('the JSON API still answers the error envelope', async () => {
    const res = await t.request('GET', '/api/checkout/v1/payments/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'PAYMENT_NOT_FOUND' }] });
    const unknown = await t.request('GET', '/api/checkout/v1/nothing');
    expect(unknown.body.errors[0].code).toBe('NOT_FOUND');
  });
});

describe('what leaves the service', () => {
  it('logs carry neither sandbox tokens nor sender numbers nor gateway trx ids', async () => {
    const id = await newPayment();
    await t.request('POST', `/api/checkout/v1/payments/${id}/transactions`, {
      body: { gateway: bkash.code, gateway_trx_id: 'LOGLEAK001', sender_number: '01798765432' },
    });
    const auto = await newPayment();
    const started = await t.request('POST', `/api/checkout/v1/payments/${auto}/transactions`, { body: { gateway: sandbox.code } });
    const token = started.body.data.redirect_url.split('/sandbox/pay/')[1];
    await page(`/sandbox/pay/${token}`);
    await fetch(`${t.baseUrl}/sandbox/pay/${token}/decline`, { method: 'POST', redirect: 'manual' });
    const logs = t.logs.join('\n');
    expect(logs).not.toContain(token);
    expect(logs).not.toContain('1798765432');
    expect(logs).not.toContain('LOGLEAK001');
    expect(logs).not.toContain(id);
  });
});
