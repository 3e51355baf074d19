import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { completeTransaction, failTransaction } from '../../server/domain/payments/transactions.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { newGatewayTrxId } from '../support/sms-matching.ts';

/**
 * Every way replacing a submitted gateway trx id is refused: past the bound,
 * a completed, failed, expired or never-submitted payment, an automatic
 * gateway, an id the brand already claims, malformed input. A refusal changes
 * nothing on the transaction and writes no audit row.
 */

let t: TestContext;
let apiKey: string;
let bkash: GatewayView;
let sandbox: GatewayView;

const api = (id: string) => `/api/checkout/v1/payments/${id}`;
const em = () => t.runtime.deps.db;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  // Test mode: the sandbox (an automatic gateway) takes test-mode payments only.
  ({ apiKey } = await t.createBrand('Replace Shop', { mode: 'test' }));
  bkash = await seedGateway(t, 'bkash', { sort_order: 1 });
  sandbox = await seedGateway(t, 'sandbox', { sort_order: 2, currencies: ['BDT'] });
});
afterAll(() => t?.close());

const payment = async (): Promise<string> => (await createPayment(t, apiKey, { reference: null })).payment_id;

async function submitted(trxId = newGatewayTrxId()): Promise<{ paymentId: string; id: number; trxId: string }> {
  const paymentId = await payment();
  const res = await t.request('POST', `${api(paymentId)}/transactions`, { body: { gateway: bkash.code, gateway_trx_id: trxId } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const [row] = await t.sql<{ id: string }>('SELECT id FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]);
  return { paymentId, id: Number(row!.id), trxId };
}

const replace = (paymentId: string, body: unknown) => t.request('PUT', `${api(paymentId)}/transaction/gateway-trx-id`, { body });

function expectError(res: { status: number; body: any }, status: number, code: string, field: string | null = null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ success: false, errors: [{ code, field }] });
}

async function row(id: number) {
  const [r] = await t.sql<any>('SELECT status, gateway_trx_id, sender_number_encrypted, updated_at FROM transactions WHERE id = $1', [id]);
  return r;
}

const audits = async (id: number) =>
  Number((await t.sql<{ n: string }>("SELECT count(*) AS n FROM audit_log WHERE action = 'transaction.replace_gateway_trx_id' AND target_id = $1", [String(id)]))[0]!.n);

describe('the replacement bound', () => {
  it(`allows 3 replacements per payment, then refuses with SUBMISSION_LIMIT_REACHED and changes nothing`, async () => {
    const p = await submitted();
    let last = p.trxId;
    for (let i = 0; i < 3; i++) {
      last = newGatewayTrxId();
      const res = await replace(p.paymentId, { gateway_trx_id: last });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.gateway_trx_id_changes_left).toBe(2 - i);
    }
    const before = await row(p.id);
    const refused = await replace(p.paymentId, { gateway_trx_id: newGatewayTrxId() });
    expectError(refused, 429, 'SUBMISSION_LIMIT_REACHED', 'gateway_trx_id');
    expect(refused.body.error).toContain('already changed 3 times');
    expect(await row(p.id)).toEqual(before);
    expect(before.gateway_trx_id).toBe(last);
    expect(await audits(p.id)).toBe(3);
    const page = await fetch(`${t.baseUrl}/checkout/${p.paymentId}`).then((r) => r.text());
    expect(page).toContain('It can no longer be changed here');
    expect(page).not.toContain('replace-form');
  });
});

describe('only an unverified manual submission can be replaced', () => {
  it('a completed payment: PAYMENT_ALREADY_STARTED, never un-completed or altered', async () => {
    const p = await submitted();
    await completeTransaction(em(), p.id, { source: 'admin' });
    const before = await row(p.id);
    expectError(await replace(p.paymentId, { gateway_trx_id: newGatewayTrxId() }), 409, 'PAYMENT_ALREADY_STARTED');
    expect(await row(p.id)).toEqual(before);
    expect(before.status).toBe('completed');
    expect(await audits(p.id)).toBe(0);
  });

  it('a failed payment, nothing submitted yet, an automatic gateway: INVALID_STATE', async () => {
    const failed = await submitted();
    await failTransaction(em(), failed.id, { reason: 'rejected by an admin' });
    const before = await row(failed.id);
    expectError(await replace(failed.paymentId, { gateway_trx_id: newGatewayTrxId() }), 409, 'INVALID_STATE', 'gateway_trx_id');
    expect(await row(failed.id)).toEqual(before);

    const fresh = await payment();
    expectError(await replace(fresh, { gateway_trx_id: newGatewayTrxId() }), 409, 'INVALID_STATE', 'gateway_trx_id');

    const auto = await payment();
    expect((await t.request('POST', `${api(auto)}/transactions`, { body: { gateway: sandbox.code } })).status).toBe(201);
    expectError(await replace(auto, { gateway_trx_id: newGatewayTrxId() }), 409, 'INVALID_STATE', 'gateway_trx_id');
    const [autoRow] = await t.sql<any>('SELECT t.status, t.gateway_trx_id FROM transactions t JOIN payment_intents i ON i.id = t.intent_id WHERE i.uuid = $1', [auto]);
    expect(autoRow).toEqual({ status: 'processing', gateway_trx_id: null });
  });

  it('an expired payment: PAYMENT_EXPIRED', async () => {
    const p = await submitted();
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [p.paymentId]);
    const before = await row(p.id);
    expectError(await replace(p.paymentId, { gateway_trx_id: newGatewayTrxId() }), 410, 'PAYMENT_EXPIRED');
    expect(await row(p.id)).toEqual(before);
  });

  it('an unknown or malformed payment id: PAYMENT_NOT_FOUND', async () => {
    expectError(await replace('00000000-0000-4000-8000-000000000000', { gateway_trx_id: 'ABC' }), 404, 'PAYMENT_NOT_FOUND');
    expectError(await replace('not-a-uuid', { gateway_trx_id: 'ABC' }), 404, 'PAYMENT_NOT_FOUND');
  });
});

describe('the new id', () => {
  it('claimed by another payment of the brand: GATEWAY_TRX_ID_TAKEN, nothing changes', async () => {
    const other = await submitted();
    const p = await submitted();
    const before = await row(p.id);
    expectError(await replace(p.paymentId, { gateway_trx_id: other.trxId.toLowerCase() }), 409, 'GATEWAY_TRX_ID_TAKEN', 'gateway_trx_id');
    expect(await row(p.id)).toEqual(before);
    expect(await audits(p.id)).toBe(0);
  });

  it('malformed input is a 400 naming the field', async () => {
    const p = await submitted();
    const cases: Array<[unknown, string]> = [
      [{}, 'gateway_trx_id'],
      [{ gateway_trx_id: '   ' }, 'gateway_trx_id'],
      [{ gateway_trx_id: 'has spaces in it' }, 'gateway_trx_id'],
      [{ gateway_trx_id: 'X'.repeat(101) }, 'gateway_trx_id'],
      [{ gateway_trx_id: 'OK00000001', sender_number: 'call me' }, 'sender_number'],
      [{ gateway_trx_id: 'OK00000001', gateway: bkash.code }, 'gateway'],
    ];
    const before = await row(p.id);
    for (const [body, field] of cases) expectError(await replace(p.paymentId, body), 400, 'VALIDATION_ERROR', field);
    expect(await row(p.id)).toEqual(before);
    expect(await audits(p.id)).toBe(0);
  });
});
