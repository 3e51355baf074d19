import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { startPublicTestServer, type PublicProxy } from '../e2e/support/public-proxy.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { ensureSandboxGateway, SANDBOX_GATEWAY_CODE } from '../../server/domain/sandbox/gateway.ts';
import { waitFor, waitForQueuesDrained } from '../support/wait.ts';
import { SEND_SANDBOX_CALLBACK_QUEUE } from '../../server/domain/sandbox/sessions.ts';

/**
 * The sandbox gateway end to end over HTTP, with real job workers: the customer
 * decides on the sandbox page, the sandbox sends its signed callback from a job
 * to the service's public URL (retried when refused), and the payment completes
 * or fails through the payment state machine with exactly one event. Refunds of
 * sandbox payments complete from a job.
 */

let t: TestContext;
let proxy: PublicProxy;
let apiKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;

const CALLBACK = '/api/checkout/v1/gateways/sandbox/callbacks';

beforeAll(async () => {
  ({ t, proxy } = await startPublicTestServer({ WORKERS_ENABLED: 'true' }));
  ({ apiKey } = await t.createBrand('Sandbox Shop', { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash');
  sandbox = await seedGateway(t, 'sandbox');
});
afterAll(() => t?.close());

/** A payment on the sandbox: its id, trx id and the sandbox page path. */
async function startSandboxPayment(gateway = sandbox.code): Promise<{ paymentId: string; trxId: string; payPath: string }> {
  const created = await t.request('POST', '/api/v1/payments', {
    token: apiKey,
    body: { amount: '300.00', currency: 'BDT', success_url: 'https://shop.example/ok' },
  });
  const paymentId = created.body.data.payment_id;
  const res = await t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const url = new URL(res.body.data.redirect_url);
  expect(url.origin).toBe(proxy.url);
  return { paymentId, trxId: res.body.data.trx_id, payPath: url.pathname };
}

async function decide(payPath: string, choice: 'approve' | 'decline') {
  const res = await fetch(`${proxy.url}${payPath}/${choice}`, { method: 'POST', redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location') };
}

const session = async (trxId: string) =>
  (
    await t.sql<{ status: string; gateway_trx_id: string | null; callback_attempts: number; callback_last_status: number | null; delivered: boolean }>(
      `SELECT status, gateway_trx_id, callback_attempts, callback_last_status, callback_delivered_at IS NOT NULL AS delivered
         FROM sandbox_sessions WHERE trx_id = $1`,
      [trxId],
    )
  )[0]!;

const transaction = async (trxId: string) =>
  (await t.sql<{ status: string; gateway_trx_id: string | null; completion_source: string | null; failure_reason: string | null }>(
    'SELECT status, gateway_trx_id, completion_source, failure_reason FROM transactions WHERE trx_id = $1',
    [trxId],
  ))[0]!;

const events = async (trxId: string) =>
  (await t.sql<{ event: string }>(`SELECT event FROM webhook_events WHERE (payload::jsonb)->'data'->>'trx_id' = $1 ORDER BY id`, [trxId])).map((r) => r.event);

describe('approving on the sandbox page', () => {
  it('sends a signed callback from a job to the public URL; the payment completes once and the customer returns to the checkout', async () => {
    const { paymentId, trxId, payPath } = await startSandboxPayment();
    const page = await fetch(proxy.url + payPath);
    expect(page.status).toBe(200);

    const res = await decide(payPath, 'approve');
    expect(res).toEqual({ status: 303, location: `/checkout/${paymentId}` });

    const done = await waitFor(() => transaction(trxId), (r) => r.status === 'completed');
    // The job records its attempt after the service answered it, so the session
    // can lag the transaction by a moment.
    const s = await waitFor(() => session(trxId), (r) => r.delivered === true);
    expect(s).toMatchObject({ status: 'approved', callback_attempts: 1, callback_last_status: 200, delivered: true });
    expect(s.gateway_trx_id).toMatch(/^SBX[0-9A-F]{16}$/);
    expect(done).toEqual({ status: 'completed', gateway_trx_id: s.gateway_trx_id, completion_source: 'gateway_callback', failure_reason: null });
    expect(await events(trxId)).toEqual(['payment.completed']);
    // The callback went through the public address, like a real gateway's would.
    expect(proxy.seen.filter((r) => r.path === CALLBACK)).toEqual([{ method: 'POST', path: CALLBACK, status: 200 }]);

    const view = (await t.request('GET', `/api/checkout/v1/payments/${paymentId}`)).body.data;
    expect(view).toMatchObject({ status: 'completed', redirect_url: `https://shop.example/ok?payment_id=${paymentId}` });

    // A second click (or the back button) changes nothing and sends nothing.
    expect(await decide(payPath, 'decline')).toEqual({ status: 303, location: `/checkout/${paymentId}` });
    await waitForQueuesDrained(t, [SEND_SANDBOX_CALLBACK_QUEUE]);
    expect((await session(trxId)).status).toBe('approved');
    expect(proxy.seen.filter((r) => r.path === CALLBACK)).toHaveLength(1);
    const sandboxPage = await fetch(proxy.url + payPath).then((r) => r.text());
    expect(sandboxPage).toContain('Payment approved');
    expect(sandboxPage).not.toContain('/approve"');
  });

  it('a callback the service did not accept is retried until it is', { timeout: 60_000 }, async () => {
    const { trxId, payPath } = await startSandboxPayment();
    proxy.refuseNext(CALLBACK, 1, 503);
    await decide(payPath, 'approve');
    const done = await waitFor(() => transaction(trxId), (r) => r.status === 'completed', 45_000);
    expect(done.status).toBe('completed');
    expect(await waitFor(() => session(trxId), (r) => r.delivered === true)).toMatchObject({ callback_attempts: 2, callback_last_status: 200, delivered: true });
    expect(await events(trxId)).toEqual(['payment.completed']);
  });
});

describe('declining on the sandbox page', () => {
  it('fails the transaction with the reason; the payment can be paid again', async () => {
    const { paymentId, trxId, payPath } = await startSandboxPayment();
    expect(await decide(payPath, 'decline')).toEqual({ status: 303, location: `/checkout/${paymentId}` });
    const failed = await waitFor(() => transaction(trxId), (r) => r.status === 'failed');
    expect(failed).toEqual({ status: 'failed', gateway_trx_id: null, completion_source: null, failure_reason: 'Declined by the gateway: The customer declined on the sandbox page' });
    expect(await events(trxId)).toEqual(['payment.failed']);
    const view = (await t.request('GET', `/api/checkout/v1/payments/${paymentId}`)).body.data;
    expect(view).toMatchObject({ status: 'failed', payable: true });
    const again = await t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway: sandbox.code } });
    expect(again.status).toBe(201);
    expect(again.body.data.redirect_url).not.toBe(`${proxy.url}${payPath}`);
  });

  it('two clicks racing decide once and send one callback', async () => {
    const { trxId, payPath } = await startSandboxPayment();
    const results = await Promise.all([decide(payPath, 'approve'), decide(payPath, 'decline'), decide(payPath, 'approve'), decide(payPath, 'decline')]);
    expect(results.every((r) => r.status === 303)).toBe(true);
    const final = await waitFor(() => transaction(trxId), (r) => r.status !== 'processing');
    const s = await session(trxId);
    expect(final.status).toBe(s.status === 'approved' ? 'completed' : 'failed');
    await waitForQueuesDrained(t, [SEND_SANDBOX_CALLBACK_QUEUE]);
    expect((await session(trxId)).callback_attempts).toBe(1);
    expect(await events(trxId)).toHaveLength(1);
  });
});

describe('an expired sandbox session', () => {
  it('cannot be decided: back to the sandbox page, which says so; nothing is sent', async () => {
    const { trxId, payPath } = await startSandboxPayment();
    await t.sql(`UPDATE sandbox_sessions SET expires_at = now() - interval '1 second' WHERE trx_id = $1`, [trxId]);
    expect(await decide(payPath, 'approve')).toEqual({ status: 303, location: payPath });
    const page = await fetch(proxy.url + payPath).then((r) => r.text());
    expect(page).toContain('This payment session has expired');
    expect(await session(trxId)).toMatchObject({ status: 'open', callback_attempts: 0 });
    expect((await transaction(trxId)).status).toBe('processing');
  });
});

describe('refunds', () => {
  it('a refund of a sandbox payment is completed by a job; a manual-gateway refund waits for an admin', async () => {
    const manual = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '300.00', currency: 'BDT' } });
    const m = await t.request('POST', `/api/checkout/v1/payments/${manual.body.data.payment_id}/transactions`, {
      body: { gateway: bkash.code, gateway_trx_id: 'RFND000001' },
    });
    await t.sql(`UPDATE transactions SET status = 'completed', completed_at = now() WHERE trx_id = $1`, [m.body.data.trx_id]);
    const manualRefund = await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { trx_id: m.body.data.trx_id, amount: '50.00' } });
    expect(manualRefund.status, JSON.stringify(manualRefund.body)).toBe(201);

    const { trxId, payPath } = await startSandboxPayment();
    await decide(payPath, 'approve');
    await waitFor(() => transaction(trxId), (r) => r.status === 'completed');
    const refund = await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { trx_id: trxId, amount: '100.00', reason: 'Changed mind' } });
    expect(refund.status, JSON.stringify(refund.body)).toBe(201);
    expect(refund.body.data.status).toBe('pending');

    const completed = await waitFor(
      async () => (await t.request('GET', `/api/v1/refunds/${trxId}`, { token: apiKey })).body.data,
      (r) => r.status === 'completed',
    );
    expect(completed).toMatchObject({ id: refund.body.data.id, status: 'completed', amount: '100.00' });
    expect(completed.processed_at).toMatch(/Z$/);
    expect(await events(trxId)).toEqual(['payment.completed', 'refund.completed']);

    const stillPending = (await t.request('GET', `/api/v1/refunds/${m.body.data.trx_id}`, { token: apiKey })).body.data;
    expect(stillPending.status).toBe('pending');
    const [jobs] = await t.sql<{ n: string }>(`SELECT count(*) AS n FROM pgboss.job WHERE name = 'complete-sandbox-refund' AND data->>'refundId' = $1`, [
      String(manualRefund.body.data.id),
    ]);
    expect(Number(jobs!.n)).toBe(0);
  });
});

describe('the built-in sandbox gateway', () => {
  it('ensureSandboxGateway creates it once and leaves an admin-changed one alone; it works like any sandbox-driven gateway', async () => {
    const em = () => t.runtime.deps.db;
    const [a, b] = await Promise.all([ensureSandboxGateway(em()), ensureSandboxGateway(em())]);
    expect(a.id).toBe(b.id);
    expect(a).toMatchObject({ code: SANDBOX_GATEWAY_CODE, type: 'automatic', currencies: ['BDT', 'USD'], enabled: true });
    await t.sql(`UPDATE gateways SET name = 'Renamed by admin' WHERE code = $1`, [SANDBOX_GATEWAY_CODE]);
    expect((await ensureSandboxGateway(em())).name).toBe('Renamed by admin');

    const { trxId, payPath } = await startSandboxPayment(SANDBOX_GATEWAY_CODE);
    await decide(payPath, 'approve');
    expect((await waitFor(() => transaction(trxId), (r) => r.status === 'completed')).status).toBe('completed');
  });
});
