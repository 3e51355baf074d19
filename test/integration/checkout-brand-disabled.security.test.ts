import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { adminRequest } from './admin-support.ts';

/**
 * A disabled brand's checkout takes no payment: every checkout page and call
 * for one of its payments is refused with BRAND_DISABLED (a human page for the
 * HTML routes), and nothing is written. Enabling the brand again restores it.
 */

let t: TestContext;
let bkash: GatewayView;
let sandbox: GatewayView;
let brandId: number;
let apiKey: string;

const api = (id: string) => `/api/checkout/v1/payments/${id}`;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  // Test mode: the sandbox (an automatic gateway) takes test-mode payments only.
  ({ brandId, apiKey } = await t.createBrand('Paused Shop', { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash', { sort_order: 1 });
  sandbox = await seedGateway(t, 'sandbox', { sort_order: 2, currencies: ['BDT'] });
});
afterAll(() => t?.close());

const newPayment = async (): Promise<string> => (await createPayment(t, apiKey, { reference: null })).payment_id;

async function setBrand(status: 'active' | 'disabled') {
  const res = await adminRequest(t, 'PATCH', `/brands/${brandId}`, { status });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

function expectDisabled(res: { status: number; body: any }) {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expect(res.body).toMatchObject({
    success: false,
    error: 'This merchant cannot take payments right now',
    errors: [{ code: 'BRAND_DISABLED', field: null }],
  });
}

async function page(path: string, method = 'GET') {
  const res = await fetch(t.baseUrl + path, { method, redirect: 'manual' });
  return { status: res.status, type: res.headers.get('content-type'), csp: res.headers.get('content-security-policy'), text: await res.text() };
}

/** Every row a checkout call could write, for "nothing is written". */
async function snapshot(paymentId: string) {
  return t.sql(
    `SELECT (SELECT count(*) FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1) AS transactions,
            (SELECT json_agg(json_build_object('id', t.id, 'status', t.status, 'gateway_trx_id', t.gateway_trx_id) ORDER BY t.id)
               FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1) AS rows,
            (SELECT json_agg(json_build_object('status', s.status, 'gateway_trx_id', s.gateway_trx_id))
               FROM sandbox_sessions s JOIN transactions t ON t.id = s.transaction_id JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1) AS sessions,
            (SELECT count(*) FROM checkout_submission_counts c JOIN payment_intents i ON i.id = c.intent_id WHERE i.uuid = $1) AS counts,
            (SELECT count(*) FROM audit_log WHERE actor = 'checkout') AS audits,
            (SELECT count(*) FROM webhook_events WHERE brand_id = $2) AS events,
            (SELECT count(*) FROM pgboss.job WHERE name = 'send-sandbox-callback') AS jobs`,
    [paymentId, brandId],
  );
}

describe("a disabled brand's checkout", () => {
  it('refuses the page and every JSON call, writing nothing; enabling the brand restores them', async () => {
    const fresh = await newPayment();
    const waiting = await newPayment();
    expect((await t.request('POST', `${api(waiting)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'PAUSED0001' } })).status).toBe(201);
    const redirected = await newPayment();
    const started = await t.request('POST', `${api(redirected)}/transactions`, { body: { gateway: sandbox.code } });
    expect(started.status).toBe(201);
    const payPath = new URL(started.body.data.redirect_url).pathname;

    await setBrand('disabled');
    const before = await Promise.all([fresh, waiting, redirected].map(snapshot));

    for (const id of [fresh, waiting, redirected]) {
      const html = await page(`/checkout/${id}`);
      expect(html.status).toBe(403);
      expect(html.type).toMatch(/^text\/html/);
      expect(html.csp).toContain("script-src 'self'");
      expect(html.text).toContain('This merchant cannot take payments right now');
      expect(html.text).not.toContain('Choose how to pay');
      expectDisabled(await t.request('GET', api(id)));
      expectDisabled(await t.request('POST', `${api(id)}/cancellations`, { body: {} }));
    }
    expectDisabled(await t.request('POST', `${api(fresh)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'PAUSED0002' } }));
    expectDisabled(await t.request('POST', `${api(fresh)}/transactions`, { body: { gateway: sandbox.code } }));
    expectDisabled(await t.request('PUT', `${api(waiting)}/transaction/gateway-trx-id`, { body: { gateway_trx_id: 'PAUSED0003' } }));

    const sandboxPage = await page(payPath);
    expect(sandboxPage.status).toBe(403);
    expect(sandboxPage.text).toContain('This merchant cannot take payments right now');
    expect(sandboxPage.text).not.toContain('/approve"');
    for (const choice of ['approve', 'decline']) {
      const res = await page(`${payPath}/${choice}`, 'POST');
      expect(res.status, choice).toBe(403);
      expect(res.text).toContain('This merchant cannot take payments right now');
    }
    expect(await Promise.all([fresh, waiting, redirected].map(snapshot))).toEqual(before);

    await setBrand('active');
    expect((await t.request('GET', api(fresh))).status).toBe(200);
    expect((await page(`/checkout/${fresh}`)).status).toBe(200);
    expect((await page(payPath)).text).toContain('/approve"');
    expect((await t.request('POST', `${api(fresh)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: 'PAUSED0002' } })).status).toBe(201);
    const approved = await page(`${payPath}/approve`, 'POST');
    expect(approved.status).toBe(303);
  });

  it('an unknown payment is still PAYMENT_NOT_FOUND (the disabled check reveals nothing more)', async () => {
    const res = await t.request('GET', api('00000000-0000-4000-8000-000000000000'));
    expect(res.status).toBe(404);
    expect(res.body.errors[0].code).toBe('PAYMENT_NOT_FOUND');
  });
});
