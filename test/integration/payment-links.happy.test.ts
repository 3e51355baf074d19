import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';

/**
 * Payment links through the merchant API and the public pages: create (fixed or
 * customer-entered amount), get, list, deactivate, QR codes, and a visit that
 * creates a payment intent and continues on the normal checkout.
 */

let t: TestContext;
let apiKey: string;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey } = await t.createBrand('Link Shop', { mode: 'test' }));
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const createLink = (body: Record<string, unknown>, token = apiKey) => t.request('POST', '/api/v1/payment-links', { token, body });
const path = (url: string) => new URL(url).pathname;

async function visit(linkUrl: string, form: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.baseUrl}${path(linkUrl)}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

describe('payment links', () => {
  it('a fixed-amount reusable link: URL and QR codes; each visit creates a payment and goes to its checkout', async () => {
    const res = await createLink({ amount: '750.00', currency: 'BDT', reference: 'poster-7', description: 'Yearly membership', success_url: 'https://shop.example/thanks' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const link = res.body.data;
    expect(link).toMatchObject({
      amount: '750.00',
      min_amount: null,
      max_amount: null,
      currency: 'BDT',
      single_use: false,
      expires_at: null,
      reference: 'poster-7',
      description: 'Yearly membership',
      active: true,
      status: 'active',
      payments_created: 0,
      livemode: false,
    });
    expect(link.id).toMatch(/^plink_[0-9a-f]{24}$/);
    expect(link.url).toBe(`${t.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/pay/${link.id}`);
    expect(link.qr_svg_url).toBe(`${link.url}/qr.svg`);
    expect(link.qr_png_url).toBe(`${link.url}/qr.png`);

    const svg = await fetch(`${t.baseUrl}${path(link.qr_svg_url)}`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await svg.text()).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const png = await fetch(`${t.baseUrl}${path(link.qr_png_url)}`);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await png.arrayBuffer()).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

    // Showing the page creates nothing (link previews must not use a link up).
    const page = await fetch(`${t.baseUrl}${path(link.url)}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const text = await page.text();
    expect(text).toContain('750.00');
    expect(text).toContain('Yearly membership');
    expect((await t.request('GET', `/api/v1/payment-links/${link.id}`, { token: apiKey })).body.data.payments_created).toBe(0);

    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const v = await visit(link.url);
      expect(v.status).toBe(303);
      const to = v.headers.get('location')!;
      expect(to).toMatch(/^\/checkout\/[0-9a-f-]{36}$/);
      ids.push(to.split('/').pop()!);
    }
    expect(ids[0]).not.toBe(ids[1]);
    const payment = await t.request('GET', `/api/v1/payments/${ids[0]}`, { token: apiKey });
    expect(payment.body.data).toMatchObject({ amount: '750.00', currency: 'BDT', reference: 'poster-7' });
    const [intent] = await t.sql<{ success_url: string; mode: string }>('SELECT success_url, mode FROM payment_intents WHERE uuid = $1', [ids[0]]);
    expect(intent).toEqual({ success_url: 'https://shop.example/thanks', mode: 'test' });
    const [row] = await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents i JOIN payment_links l ON l.id = i.payment_link_id WHERE l.public_id = $1', [link.id]);
    expect(row!.n).toBe('2');
    expect((await t.request('GET', `/api/v1/payment-links/${link.id}`, { token: apiKey })).body.data).toMatchObject({ payments_created: 2, status: 'active' });
    const checkout = await fetch(`${t.baseUrl}/checkout/${ids[0]}`);
    expect(checkout.status).toBe(200);
  });

  it('a customer-entered amount within bounds; a bad or out-of-bounds amount shows the form again and creates nothing', async () => {
    const link = (await createLink({ currency: 'BDT', min_amount: '100.00', max_amount: '5000.00' })).body.data;
    expect(link).toMatchObject({ amount: null, min_amount: '100.00', max_amount: '5000.00' });
    const page = await (await fetch(`${t.baseUrl}${path(link.url)}`)).text();
    expect(page).toContain('name="amount"');

    for (const [amount, message] of [['abc', 'Enter an amount like 500 or 500.50'], ['99.99', 'Enter at least 100.00 BDT'], ['5000.01', 'Enter at most 5000.00 BDT']] as const) {
      const bad = await visit(link.url, { amount });
      expect(bad.status).toBe(400);
      expect(await bad.text()).toContain(message);
    }
    const good = await visit(link.url, { amount: '1,250.5' });
    expect(good.status).toBe(303);
    const paymentId = good.headers.get('location')!.split('/').pop()!;
    expect((await t.request('GET', `/api/v1/payments/${paymentId}`, { token: apiKey })).body.data.amount).toBe('1250.50');
    expect((await t.request('GET', `/api/v1/payment-links/${link.id}`, { token: apiKey })).body.data.payments_created).toBe(1);
  });

  it('a single-use link takes one payment; then its page says it has been used', async () => {
    const link = (await createLink({ amount: '300.00', currency: 'BDT', single_use: true })).body.data;
    expect((await visit(link.url)).status).toBe(303);
    const again = await visit(link.url);
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('This payment link has already been used.');
    expect((await fetch(`${t.baseUrl}${path(link.url)}`)).status).toBe(410);
    expect((await t.request('GET', `/api/v1/payment-links/${link.id}`, { token: apiKey })).body.data).toMatchObject({ status: 'used', payments_created: 1 });
  });

  it('a single-use link whose payment expired unpaid takes a new one', async () => {
    const link = (await createLink({ amount: '300.00', currency: 'BDT', single_use: true })).body.data;
    const first = (await visit(link.url)).headers.get('location')!.split('/').pop()!;
    await t.sql("UPDATE payment_intents SET expires_at = now() - interval '1 second', created_at = now() - interval '1 hour' WHERE uuid = $1", [first]);
    expect((await visit(link.url)).status).toBe(303);
  });

  it('two visitors of a single-use link at once: one payment', async () => {
    const link = (await createLink({ amount: '410.00', currency: 'BDT', single_use: true })).body.data;
    const answers = await Promise.all(Array.from({ length: 6 }, () => visit(link.url)));
    expect(answers.map((a) => a.status).sort()).toEqual([303, 410, 410, 410, 410, 410]);
    const [row] = await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents i JOIN payment_links l ON l.id = i.payment_link_id WHERE l.public_id = $1', [link.id]);
    expect(row!.n).toBe('1');
  });

  it('deactivated and expired links show a clear page; deactivating twice is harmless', async () => {
    const link = (await createLink({ amount: '200.00', currency: 'BDT' })).body.data;
    const off = await t.request('POST', `/api/v1/payment-links/${link.id}/deactivate`, { token: apiKey });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ active: false, status: 'inactive' });
    expect((await t.request('POST', `/api/v1/payment-links/${link.id}/deactivate`, { token: apiKey })).body.data.status).toBe('inactive');
    const v = await visit(link.url);
    expect(v.status).toBe(410);
    expect(await v.text()).toContain('This payment link is no longer active.');

    const soon = (await createLink({ amount: '200.00', currency: 'BDT', expires_at: new Date(Date.now() + 60_000).toISOString() })).body.data;
    await t.sql("UPDATE payment_links SET expires_at = now() - interval '1 second' WHERE public_id = $1", [soon.id]);
    const page = await fetch(`${t.baseUrl}${path(soon.url)}`);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('This payment link has expired.');
    expect((await visit(soon.url)).status).toBe(410);
  });

  it('lists the brand\'s links of the key\'s mode, newest first', async () => {
    const { apiKey: other } = await t.createBrand('List Shop', { mode: 'test' });
    const a = (await createLink({ amount: '10.00', currency: 'BDT' }, other)).body.data;
    const b = (await createLink({ amount: '20.00', currency: 'BDT' }, other)).body.data;
    const res = await t.request('GET', '/api/v1/payment-links?per_page=1', { token: other });
    expect(res.status).toBe(200);
    expect(res.body.data.map((l: { id: string }) => l.id)).toEqual([b.id]);
    expect(res.body.meta).toEqual({ page: 1, per_page: 1, total: 2, total_pages: 2 });
    const page2 = await t.request('GET', '/api/v1/payment-links?page=2&per_page=1', { token: other });
    expect(page2.body.data.map((l: { id: string }) => l.id)).toEqual([a.id]);
  });
});
