import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { computeSandboxSignature, sandboxSignatureHeader } from '../../server/domain/sandbox/signature.ts';
import { runIntentExpirySweep } from '../../server/domain/payments/expire-intents.job.ts';

/**
 * The sandbox gateway's callback, as an attacker or a flaky network would send
 * it: the signature over the raw body is checked before anything else (bad,
 * missing, malformed, stale, tampered: 401), a replay changes nothing, and a
 * correctly signed callback that contradicts the record changes nothing either.
 */

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;
let secret: string;

const CALLBACK = '/api/checkout/v1/gateways/sandbox/callbacks';
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  // No workers: the only callbacks are the ones this file sends.
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey } = await t.createBrand('Signed Shop', { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash');
  sandbox = await seedGateway(t, 'sandbox');
  secret = t.runtime.deps.secrets.sandboxCallbackSecret;
});
afterAll(() => t?.close());

/** A payment with a processing sandbox transaction; returns its trx id. */
async function processing(amount = '120.00'): Promise<{ paymentId: string; trxId: string }> {
  const created = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount, currency: 'BDT' } });
  const paymentId = created.body.data.payment_id;
  const res = await t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway: sandbox.code } });
  expect(res.status).toBe(201);
  return { paymentId, trxId: res.body.data.trx_id };
}

function callbackBody(trxId: string, over: Record<string, unknown> = {}): string {
  return JSON.stringify({
    outcome: 'approved',
    trx_id: trxId,
    gateway_trx_id: `SBX${trxId.slice(3)}`,
    amount: '120.00',
    currency: 'BDT',
    reason: null,
    decided_at: new Date().toISOString(),
    ...over,
  });
}

function send(raw: string, signature: string | null) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== null) headers['x-sandbox-signature'] = signature;
  return t.request('POST', CALLBACK, { rawBody: raw, headers });
}

async function state(trxId: string) {
  const [row] = await t.sql<{ status: string; gateway_trx_id: string | null; completion_source: string | null }>(
    'SELECT status, gateway_trx_id, completion_source FROM transactions WHERE trx_id = $1',
    [trxId],
  );
  const [events] = await t.sql<{ n: string }>(
    `SELECT count(*) AS n FROM webhook_events WHERE (payload::jsonb)->'data'->>'trx_id' = $1`,
    [trxId],
  );
  return { ...row!, events: Number(events!.n) };
}

function expectRefused(res: { status: number; body: any }, message: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(res.body).toMatchObject({ success: false, error: message, errors: [{ code: 'INVALID_SIGNATURE', field: null }] });
}

describe('the callback signature', () => {
  it('a good signature completes the transaction once; a replay answers 200 and changes nothing', async () => {
    const { trxId } = await processing();
    const raw = callbackBody(trxId);
    const header = sandboxSignatureHeader(secret, now(), raw);
    const first = await send(raw, header);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data).toEqual({ trx_id: trxId, status: 'completed', changed: true });
    expect(await state(trxId)).toEqual({ status: 'completed', gateway_trx_id: `SBX${trxId.slice(3)}`, completion_source: 'gateway_callback', events: 1 });

    // The very same request again (a gateway retrying after a lost response).
    const replay = await send(raw, header);
    expect(replay.status).toBe(200);
    expect(replay.body.data).toEqual({ trx_id: trxId, status: 'completed', changed: false });
    // Re-signed later, still the same facts: nothing changes.
    expect((await send(raw, sandboxSignatureHeader(secret, now(), raw))).body.data.changed).toBe(false);
    expect((await state(trxId)).events).toBe(1);
  });

  it('refuses a wrong, missing, malformed, stale or future signature and a tampered body, changing nothing', async () => {
    const { trxId } = await processing();
    const raw = callbackBody(trxId);
    const ts = now();
    expectRefused(await send(raw, sandboxSignatureHeader('another-secret-that-is-long-enough-000', ts, raw)), 'Signature does not match');
    expectRefused(await send(raw, null), 'Missing signature');
    expectRefused(await send(raw, 'sha256=abc'), 'Malformed signature header');
    expectRefused(await send(raw, `t=${ts}`), 'Malformed signature header');
    expectRefused(await send(raw, `t=${ts},v1=${'0'.repeat(63)}`), 'Malformed signature header');
    // Half a minute past the 300 s tolerance either way: a loaded machine may take seconds between signing and checking.
    expectRefused(await send(raw, sandboxSignatureHeader(secret, ts - 330, raw)), 'Signature timestamp is outside the tolerance');
    expectRefused(await send(raw, sandboxSignatureHeader(secret, ts + 330, raw)), 'Signature timestamp is outside the tolerance');
    // A signature over one body does not carry another (amount changed in transit).
    const tampered = raw.replace('"120.00"', '"1.00"');
    expectRefused(await send(tampered, sandboxSignatureHeader(secret, ts, raw)), 'Signature does not match');
    // The timestamp is inside the MAC: an old signature with a fresh t does not verify.
    expectRefused(await send(raw, `t=${ts + 5},v1=${computeSandboxSignature(secret, ts, raw)}`), 'Signature does not match');
    // Re-serialised JSON (other spacing) is not the signed bytes.
    expectRefused(await send(JSON.stringify(JSON.parse(raw), null, 2), sandboxSignatureHeader(secret, ts, raw)), 'Signature does not match');
    expect(await state(trxId)).toEqual({ status: 'processing', gateway_trx_id: null, completion_source: null, events: 0 });
    // Within the tolerance it is accepted.
    expect((await send(raw, sandboxSignatureHeader(secret, ts - 299, raw))).status).toBe(200);
  });

  it('checks the signature before the body: an unsigned garbage body is 401, a signed one is 400', async () => {
    expectRefused(await send('{"hello":"world"}', null), 'Missing signature');
    const raw = '{"hello":"world"}';
    const res = await send(raw, sandboxSignatureHeader(secret, now(), raw));
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.field)).toContain('hello');
  });

  it('keeps secrets and signatures out of the logs', async () => {
    const { trxId } = await processing();
    const raw = callbackBody(trxId);
    const header = sandboxSignatureHeader(secret, now(), raw);
    await send(raw, header);
    await send(raw, 'garbage');
    const logs = t.logs.join('\n');
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(header.split('v1=')[1]);
    expect(logs).toContain('"reason":"malformed"');
  });
});

describe('signed callbacks that contradict the record change nothing', () => {
  it('a decline fails the transaction (replay-safe); an approval after it is INVALID_STATE', async () => {
    const { paymentId, trxId } = await processing();
    const raw = callbackBody(trxId, { outcome: 'declined', reason: 'Insufficient funds' });
    const res = await send(raw, sandboxSignatureHeader(secret, now(), raw));
    expect(res.body.data).toEqual({ trx_id: trxId, status: 'failed', changed: true });
    expect((await send(raw, sandboxSignatureHeader(secret, now(), raw))).body.data).toEqual({ trx_id: trxId, status: 'failed', changed: false });
    const [row] = await t.sql<{ failure_reason: string }>('SELECT failure_reason FROM transactions WHERE trx_id = $1', [trxId]);
    expect(row!.failure_reason).toBe('Declined by the gateway: Insufficient funds');

    const approve = callbackBody(trxId);
    const late = await send(approve, sandboxSignatureHeader(secret, now(), approve));
    expect(late.status).toBe(409);
    expect(late.body.errors[0].code).toBe('INVALID_STATE');
    expect((await state(trxId)).status).toBe('failed');
    // The payment itself is payable again.
    expect((await t.request('GET', `/api/checkout/v1/payments/${paymentId}`)).body.data).toMatchObject({ status: 'failed', payable: true });
  });

  it('an approval reporting another amount or currency is INVALID_STATE and completes nothing', async () => {
    const { trxId } = await processing();
    for (const over of [{ amount: '119.99' }, { currency: 'USD' }]) {
      const raw = callbackBody(trxId, over);
      const res = await send(raw, sandboxSignatureHeader(secret, now(), raw));
      expect(res.status).toBe(409);
      expect(res.body.errors[0]).toMatchObject({ code: 'INVALID_STATE', field: 'amount' });
    }
    expect((await state(trxId)).status).toBe('processing');
  });

  it('an approval arriving after the expiry job expired the transaction is INVALID_STATE', async () => {
    const { paymentId, trxId } = await processing();
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [paymentId]);
    await runIntentExpirySweep(t.runtime.deps);
    expect((await state(trxId)).status).toBe('expired');
    const raw = callbackBody(trxId);
    const res = await send(raw, sandboxSignatureHeader(secret, now(), raw));
    expect(res.status).toBe(409);
    expect(res.body.errors[0].code).toBe('INVALID_STATE');
    expect(await state(trxId)).toMatchObject({ status: 'expired', gateway_trx_id: null, events: 1 });
  });

  it("an unknown reference, or a manual gateway's transaction, is TRANSACTION_NOT_FOUND", async () => {
    const unknown = callbackBody('TRX0000000000000000');
    const res = await send(unknown, sandboxSignatureHeader(secret, now(), unknown));
    expect(res.status).toBe(404);
    expect(res.body.errors[0]).toMatchObject({ code: 'TRANSACTION_NOT_FOUND', field: 'trx_id' });

    const created = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '120.00', currency: 'BDT' } });
    const manual = await t.request('POST', `/api/checkout/v1/payments/${created.body.data.payment_id}/transactions`, {
      body: { gateway: bkash.code, gateway_trx_id: 'MANUAL0001' },
    });
    const raw = callbackBody(manual.body.data.trx_id);
    const refused = await send(raw, sandboxSignatureHeader(secret, now(), raw));
    expect(refused.status).toBe(404);
    expect((await state(manual.body.data.trx_id)).status).toBe('awaiting_verification');
  });
});
