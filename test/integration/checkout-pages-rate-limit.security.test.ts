import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';

/**
 * The hosted checkout's HTML pages and QR images sit outside the contract's
 * middleware, yet a payment link's visit creates a payment: they spend the
 * checkout's per-address limit like its JSON routes, and a refusal is a 429
 * HTML page with the limiter's headers.
 */

const QUOTA = 5;
let t: TestContext;
let apiKey: string;
let lastOctet = 10;
// TRUST_PROXY (one hop) lets the test speak from several client addresses through X-Forwarded-For.
const newAddress = () => `203.0.113.${lastOctet++}`;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', TRUST_PROXY: '1', RATE_LIMIT_CHECKOUT: `${QUOTA}/3600` });
  ({ apiKey } = await t.createBrand('Burst Shop', { mode: 'test' }));
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

async function newLink(): Promise<{ id: string; path: string }> {
  const res = await t.request('POST', '/api/v1/payment-links', { token: apiKey, body: { amount: '100.00', currency: 'BDT' } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.data.id, path: new URL(res.body.data.url).pathname };
}

const from = (address: string, init: RequestInit = {}) => ({ ...init, redirect: 'manual' as const, headers: { ...(init.headers as Record<string, string>), 'x-forwarded-for': address } });
const visit = (p: string, address: string) =>
  fetch(`${t.baseUrl}${p}`, from(address, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' }));

async function paymentsCreated(linkId: string): Promise<number> {
  return (await t.request('GET', `/api/v1/payment-links/${linkId}`, { token: apiKey })).body.data.payments_created;
}

function expectRefusal(res: Response) {
  expect(res.status).toBe(429);
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(res.headers.get('ratelimit-policy')).toBe(`"checkout";q=${QUOTA};w=3600`);
  expect(res.headers.get('ratelimit')).toMatch(/^"checkout";r=0;t=\d+$/);
}

describe('payment link visits from one address', () => {
  it('a burst is refused with 429 once the quota is spent: no more payments are created; another address still pays', async () => {
    const link = await newLink();
    const address = newAddress();
    const answers = await Promise.all(Array.from({ length: 3 * QUOTA }, () => visit(link.path, address)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 303)).toHaveLength(QUOTA);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * QUOTA);
    const refused = answers.find((r) => r.status === 429)!;
    expectRefusal(refused);
    expect(await refused.text()).toContain('Too many requests');
    expect(await paymentsCreated(link.id)).toBe(QUOTA);

    // The page and the QR images of the link are refused too, from that address.
    for (const p of [link.path, `${link.path}/qr.svg`, `${link.path}/qr.png`]) expectRefusal(await fetch(`${t.baseUrl}${p}`, from(address)));

    const other = await visit(link.path, newAddress());
    expect(other.status).toBe(303);
    expect(await paymentsCreated(link.id)).toBe(QUOTA + 1);
  });

  it('the page, its QR images and the checkout page share the checkout JSON routes\' budget', async () => {
    const link = await newLink();
    const address = newAddress();
    const page = await fetch(`${t.baseUrl}${link.path}`, from(address));
    expect(page.status).toBe(200);
    expect(page.headers.get('ratelimit')).toMatch(new RegExp(`^"checkout";r=${QUOTA - 1};t=\\d+$`));
    expect((await fetch(`${t.baseUrl}${link.path}/qr.svg`, from(address))).status).toBe(200);
    expect((await fetch(`${t.baseUrl}${link.path}/qr.png`, from(address))).status).toBe(200);
    const visited = await visit(link.path, address);
    expect(visited.status).toBe(303);
    const checkoutPath = visited.headers.get('location')!;
    const paymentId = checkoutPath.split('/').pop()!;
    expect((await fetch(`${t.baseUrl}${checkoutPath}`, from(address))).status).toBe(200);
    // The fifth request was the checkout page: the JSON route is the sixth, and refused.
    const json = await fetch(`${t.baseUrl}/api/checkout/v1/payments/${paymentId}`, from(address));
    expect(json.status).toBe(429);
    expect((await json.json()).errors[0].code).toBe('RATE_LIMITED');
    expectRefusal(await fetch(`${t.baseUrl}${checkoutPath}`, from(address)));
    expect(await paymentsCreated(link.id)).toBe(1);
  });
});
