import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, type DemoSeed } from '../../server/domain/brands/demo.ts';
import { firstRunBanner } from '../../server/first-run.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, deviceRequest, newFingerprint } from '../support/device.ts';
import { newGatewayTrxId, smsBodies, transactionRow } from '../support/sms-matching.ts';
import { adminRequest } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const seed = () => seedDemo(t.runtime.deps.db, t.runtime.deps.crypto, { publicBaseUrl: t.baseUrl });
let demo: DemoSeed;

describe('first-run demo seed', () => {
  it('seeds once, also when two processes start on the empty database at the same moment', async () => {
    const results = await Promise.all([seed(), seed(), seed()]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    demo = results.find((r) => r !== null)!;
    expect(await t.sql('SELECT name FROM brands')).toEqual([{ name: 'Demo Shop' }]);
    expect(await seed()).toBeNull();
  });

  it('a new user can pay the demo payment with the manual gateway and have it verified by a forwarded SMS', async () => {
    const { apiKey: key, pairingCode: code, paymentId } = demo;
    expect(demo.checkoutUrl).toBe(`${t.baseUrl}/checkout/${paymentId}`);
    const gateways = (await adminRequest(t, 'GET', '/gateways')).body.data;
    expect(gateways.map((g: { code: string; type: string; enabled: boolean }) => [g.code, g.type, g.enabled])).toEqual([
      ['bkash', 'manual', true],
      ['sandbox', 'automatic', true],
    ]);
    expect(gateways[0]).toMatchObject({ sms_senders: ['bKash'], receiving_account: '01700000000', min_amount: '10.00', max_amount: '25000.00' });
    expect(gateways[0].sms_templates.length).toBeGreaterThan(1);
    expect(gateways[0].sms_templates[0]).toMatchObject({ direction: 'in', kind: 'received' });

    const page = await fetch(`${t.baseUrl}/checkout/${paymentId}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const view = await t.request('GET', `/api/checkout/v1/payments/${paymentId}`);
    expect(view.body.data.gateways.map((g: { code: string }) => g.code)).toEqual(['bkash', 'sandbox']);

    // The demo brand has its own account on the demo gateway (the demo receiving number, no phone bound), and the checkout shows it.
    const accounts = await adminRequest(t, 'GET', `/brands/${demo.brandId}/wallet-accounts`);
    expect(accounts.status).toBe(200);
    expect(accounts.body.data).toEqual([
      expect.objectContaining({ id: demo.walletAccount.id, gateway: 'bkash', number: '01700000000', account_type: 'personal', label: 'Demo bKash', enabled: true, daily_limit: null, device_id: null, sim_slot: null }),
    ]);
    expect(view.body.data.gateways[0]).toMatchObject({ code: 'bkash', receiving_account: '01700000000', receiving_account_type: 'personal' });
    expect(await t.sql("SELECT actor FROM audit_log WHERE action = 'wallet_account.create'")).toEqual([{ actor: 'system:first-run' }]);

    const trxId = newGatewayTrxId();
    const paid = await t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway: 'bkash', gateway_trx_id: trxId } });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    expect(await t.sql('SELECT wallet_account_id FROM transactions WHERE gateway_trx_id = $1', [trxId])).toEqual([{ wallet_account_id: String(demo.walletAccount.id) }]);
    const paired = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: code, body: { fingerprint: newFingerprint(), device_name: 'Demo phone' } });
    expect(paired.status).toBe(201);
    const forwarded = await deviceRequest(t, { accessToken: paired.body.data.access_token }, 'POST', '/sms/messages', {
      messages: [{ device_message_id: 'demo-1', sender: 'bKash', body: smsBodies.bkash('500.00', trxId), received_at: new Date().toISOString() }],
    });
    expect(forwarded.body.data[0]).toMatchObject({ match_status: 'matched' });
    const payment = await t.request('GET', `/api/v1/payments/${paymentId}`, { token: key });
    expect(payment.body.data).toMatchObject({ status: 'completed', gateway: 'bkash', gateway_trx_id: trxId, amount: '500.00', reference: 'demo-order-1' });
    expect((await transactionRow(t, payment.body.data.transaction_id)).completion_source).toBe('sms');
  });

  it('the banner prints the admin token, the key, the pairing code, the checkout URL and the docs URL', async () => {
    await t.sql('TRUNCATE brands CASCADE');
    const fresh = (await seed())!;
    const text = firstRunBanner(fresh, 'adm_TOKEN', t.baseUrl);
    expect(text).toContain('  Admin token:        adm_TOKEN\n');
    expect(text).toContain(`  Demo brand API key: ${fresh.apiKey} (test mode: the demo payment, the pairing code and the sandbox)\n`);
    expect(text).toContain(`  Live API key:       ${fresh.liveApiKey} (live mode: sees no test object, never offered the sandbox)\n`);
    expect(text).toMatch(new RegExp(`  Pairing code: {7}${fresh.pairingCode} \\(one use, valid until \\S+Z\\)\\n`));
    expect(text).toContain(`  Demo checkout:      ${t.baseUrl}/checkout/${fresh.paymentId} (500.00 BDT)\n`);
    expect(text).toContain(`  API reference:      ${t.baseUrl}/docs\n`);
    expect(fresh.apiKey).toMatch(/^sk_test_/);
    expect(fresh.liveApiKey).toMatch(/^sk_live_/);
    expect((await t.request('GET', '/api/v1/brand', { token: fresh.apiKey })).body.data.name).toBe('Demo Shop');
    // The demo payment is test mode: the live key does not see it.
    const asLive = await t.request('GET', `/api/v1/payments/${fresh.paymentId}`, { token: fresh.liveApiKey });
    expect([asLive.status, asLive.body.errors[0].code]).toEqual([404, 'PAYMENT_NOT_FOUND']);
    expect((await t.request('GET', `/api/v1/payments/${fresh.paymentId}`, { token: fresh.apiKey })).body.data.livemode).toBe(false);
    const pair = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: fresh.pairingCode, body: { fingerprint: newFingerprint(), device_name: 'x' } });
    expect(pair.status).toBe(201);
    // Existing gateways are kept as they are, not duplicated.
    expect((await adminRequest(t, 'GET', '/gateways')).body.data).toHaveLength(2);
  });
});
