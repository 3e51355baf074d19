import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { forwardSms, newGatewayTrxId, officialSender, smsBodies, smsScene, smsRow, transactionRow, type SmsScene } from '../support/sms-matching.ts';

/**
 * Replacing a mistyped (or made-up) gateway transaction id at the checkout:
 * the new id is claimed, the old one released for its true owner, the change
 * audited without personal data, and stored SMS matched against the new claim.
 */

let t: TestContext;
let scene: SmsScene;

const api = (id: string) => `/api/checkout/v1/payments/${id}`;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_DEVICE: 'off' });
  scene = await smsScene(t);
});
afterAll(() => t?.close());

async function submitted(trxId: string, amount = '500.00', extra: Record<string, unknown> = {}): Promise<{ paymentId: string; transactionId: number }> {
  const created = await t.request('POST', '/api/v1/payments', { token: scene.apiKey, body: { amount, currency: 'BDT' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const paymentId = created.body.data.payment_id;
  const res = await t.request('POST', `${api(paymentId)}/transactions`, { body: { gateway: scene.gateway.code, gateway_trx_id: trxId, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: trxId, gateway_trx_id_changes_left: 3 });
  const [row] = await t.sql<{ id: string }>('SELECT id FROM transactions WHERE trx_id = $1', [res.body.data.trx_id]);
  return { paymentId, transactionId: Number(row!.id) };
}

const replace = (paymentId: string, body: unknown) => t.request('PUT', `${api(paymentId)}/transaction/gateway-trx-id`, { body });

async function sender(transactionId: number): Promise<string | null> {
  const [row] = await t.sql<{ s: string | null }>('SELECT sender_number_encrypted AS s FROM transactions WHERE id = $1', [transactionId]);
  return row!.s;
}

describe('replacing a submitted gateway trx id', () => {
  it('claims the new id, releases the old one for its true owner, and is audited without personal data', async () => {
    const made_up = newGatewayTrxId('G');
    const real = newGatewayTrxId('R');
    const victim = await submitted(made_up, '500.00', { sender_number: '01711111111' });
    expect(await sender(victim.transactionId)).not.toBeNull();

    // While the made-up claim stands, its true owner (another payment of the brand) is refused.
    const owner = await t.request('POST', '/api/v1/payments', { token: scene.apiKey, body: { amount: '120.00', currency: 'BDT' } });
    const ownerPay = () => t.request('POST', `${api(owner.body.data.payment_id)}/transactions`, { body: { gateway: scene.gateway.code, gateway_trx_id: made_up.toLowerCase() } });
    expect((await ownerPay()).status).toBe(409);

    const res = await replace(victim.paymentId, { gateway_trx_id: real });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: real, gateway_trx_id_changes_left: 2 });
    expect(await transactionRow(t, victim.transactionId)).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: real });
    // The sender number went with the claim it was typed for.
    expect(await sender(victim.transactionId)).toBeNull();

    const audit = await t.sql<any>("SELECT * FROM audit_log WHERE action = 'transaction.replace_gateway_trx_id' AND target_id = $1", [String(victim.transactionId)]);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor: 'checkout',
      target_type: 'transaction',
      brand_id: String(scene.brandId),
      before: { gateway_trx_id: made_up, status: 'awaiting_verification' },
      after: { gateway_trx_id: real, status: 'awaiting_verification', replacement: 1, max_replacements: 3 },
    });
    expect(audit[0].request_id).toBe(res.body.request_id ?? res.headers.get('x-request-id'));
    expect(JSON.stringify(audit[0])).not.toContain('01711111111');

    // The released id is free: its owner's submission is taken now.
    const freed = await ownerPay();
    expect(freed.status, JSON.stringify(freed.body)).toBe(201);
    expect(freed.body.data.gateway_trx_id).toBe(made_up.toLowerCase());

    // The page offers the change while it waits, and says how many are left.
    const page = await fetch(`${t.baseUrl}/checkout/${victim.paymentId}`).then((r) => r.text());
    expect(page).toContain('Wrong transaction ID? Change it');
    expect(page).toContain('2 more times');
  });

  it('a new sender number replaces the old one; the same id again changes nothing and is not counted', async () => {
    const first = newGatewayTrxId('S');
    const p = await submitted(first);
    const second = newGatewayTrxId('S');
    const res = await replace(p.paymentId, { gateway_trx_id: second, sender_number: '01822222222' });
    expect(res.status).toBe(200);
    const stored = await sender(p.transactionId);
    expect(stored).not.toBeNull();
    expect(stored).not.toContain('01822222222');
    const again = await replace(p.paymentId, { gateway_trx_id: ` ${second.toLowerCase()} ` });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ gateway_trx_id: second, gateway_trx_id_changes_left: 2 });
    expect(await sender(p.transactionId)).toBe(stored);
    const [count] = await t.sql<{ n: string }>("SELECT count(*) AS n FROM audit_log WHERE action = 'transaction.replace_gateway_trx_id' AND target_id = $1", [String(p.transactionId)]);
    expect(Number(count!.n)).toBe(1);
  });

  it('an SMS stored before the replacement is matched against the new claim at once', async () => {
    const real = newGatewayTrxId('M');
    const p = await submitted(newGatewayTrxId('W'), '731.00');
    const [sms] = await forwardSms(t, scene.device, [{ sender: officialSender.bkash, body: smsBodies.bkash('731.00', real) }]);
    expect(sms!.match_status).not.toBe('matched');
    expect((await transactionRow(t, p.transactionId)).status).toBe('awaiting_verification');

    const res = await replace(p.paymentId, { gateway_trx_id: real });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'completed', gateway_trx_id: real, gateway_trx_id_changes_left: null });
    expect(await transactionRow(t, p.transactionId)).toMatchObject({ status: 'completed', gateway_trx_id: real, completion_source: 'sms' });
    expect(await smsRow(t, sms!.id)).toMatchObject({ match_status: 'matched', transaction_id: String(p.transactionId) });
  });
});
