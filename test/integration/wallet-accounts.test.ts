import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PaycollectDevice } from '../../clients/device/index.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newFingerprint, newPairingCode, pairDevice, type PairedDevice } from '../support/device.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { adminRequest, auditRows } from './admin-support.ts';
import { creditTemplate, creditWithBalance, forwardSms, newGatewayTrxId, sendMoneyTemplate, smsBodies, smsRow } from '../support/sms-matching.ts';

/**
 * Wallet accounts per brand (docs/matching.md, "Wallet accounts"): each brand
 * its own receiving numbers on a platform gateway, each bound to the phone and
 * SIM slot that receive its SMS, and balance chains per phone, SIM and wallet.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off' });
});
afterAll(() => t?.close());
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.log(t.logs.filter((l) => l.includes('"level":"error"')).slice(-3).map((l) => JSON.parse(l).err?.message).join('\n'));
});

const accounts = (brandId: number) => `/brands/${brandId}/wallet-accounts`;

async function addAccount(brandId: number, body: Record<string, unknown>) {
  const res = await adminRequest(t, 'POST', accounts(brandId), body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: number; number: string };
}

async function checkoutGateway(paymentId: string, code: string) {
  const res = await t.request('GET', `/api/checkout/v1/payments/${paymentId}`);
  expect(res.status).toBe(200);
  return (res.body.data.gateways as Array<{ code: string; receiving_account: string | null; receiving_account_type: string | null }>).find((g) => g.code === code);
}

async function payAtCheckout(paymentId: string, gateway: string, trxId: string) {
  const res = await t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway, gateway_trx_id: trxId } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { trx_id: string; status: string };
}

async function transactionAccount(trxId: string): Promise<string | null> {
  const [row] = await t.sql<{ wallet_account_id: string | null }>('SELECT wallet_account_id FROM transactions WHERE trx_id = $1', [trxId]);
  return row!.wallet_account_id;
}

async function statusOf(paymentId: string, apiKey: string): Promise<string> {
  const res = await t.request('GET', `/api/v1/payments/${paymentId}`, { token: apiKey });
  return res.body.data.status;
}

/** A device client of the SDK, paired to the brand. */
async function sdkPhone(brandId: number): Promise<PaycollectDevice> {
  const device = new PaycollectDevice({ baseUrl: t.baseUrl, fingerprint: newFingerprint() });
  await device.pair(await newPairingCode(t, brandId), { device_name: 'Shop phone', app_version: '3.0.0' });
  return device;
}

describe('two brands on one installation, each its own bKash number and phone', () => {
  it('each checkout shows its own number, and each payment is verified by its own phone (device SDK)', async () => {
    const gateway = await seedGateway(t, 'bkash');
    const a = await t.createBrand('Brand A');
    const b = await t.createBrand('Brand B');
    const phoneA = await sdkPhone(a.brandId);
    const phoneB = await sdkPhone(b.brandId);
    const deviceIdOf = async (brandId: number) => Number((await t.sql<{ id: string }>('SELECT id FROM devices WHERE brand_id = $1', [brandId]))[0]!.id);
    const accountA = await addAccount(a.brandId, { gateway: gateway.code, number: '01711000001', label: 'A main', device_id: await deviceIdOf(a.brandId), sim_slot: 0 });
    const accountB = await addAccount(b.brandId, { gateway: gateway.code, number: '01811000002', account_type: 'merchant', device_id: await deviceIdOf(b.brandId) });

    const payA = await createPayment(t, a.apiKey, { amount: '850.00', currency: 'BDT' });
    const payB = await createPayment(t, b.apiKey, { amount: '850.00', currency: 'BDT' });
    expect(await checkoutGateway(payA.payment_id, gateway.code)).toMatchObject({ receiving_account: '01711000001', receiving_account_type: 'personal' });
    expect(await checkoutGateway(payB.payment_id, gateway.code)).toMatchObject({ receiving_account: '01811000002', receiving_account_type: 'merchant' });

    const trxA = newGatewayTrxId('A');
    const trxB = newGatewayTrxId('B');
    const startedA = await payAtCheckout(payA.payment_id, gateway.code, trxA);
    const startedB = await payAtCheckout(payB.payment_id, gateway.code, trxB);
    expect(await transactionAccount(startedA.trx_id)).toBe(String(accountA.id));
    expect(await transactionAccount(startedB.trx_id)).toBe(String(accountB.id));
    const listed = await adminRequest(t, 'GET', `/transactions?trx_id=${startedA.trx_id}`);
    expect(listed.body.data[0].wallet_account).toEqual({ id: accountA.id, number: '01711000001', label: 'A main' });

    const now = new Date().toISOString();
    const [answerA] = await phoneA.smsMessages.forward({
      messages: [{ device_message_id: `a-${trxA}`, sender: 'bKash', body: smsBodies.bkash('850.00', trxA), received_at: now, sim_slot: 0, receiving_number: '+8801711000001' }],
    });
    const [answerB] = await phoneB.smsMessages.forward({ messages: [{ device_message_id: `b-${trxB}`, sender: 'bKash', body: smsBodies.bkash('850.00', trxB), received_at: now }] });
    expect(answerA).toMatchObject({ match_status: 'matched', trx_id: startedA.trx_id });
    expect((await adminRequest(t, 'GET', `/sms-records/${answerA!.id}`)).body.data).toMatchObject({ sim_slot: 0, receiving_number: '+8801711000001' });
    expect(answerB).toMatchObject({ match_status: 'matched', trx_id: startedB.trx_id });
    expect(await statusOf(payA.payment_id, a.apiKey)).toBe('completed');
    expect(await statusOf(payB.payment_id, b.apiKey)).toBe('completed');
  });

  it("an SMS from another phone of the brand than the account's, or naming another receiving number, does not complete: account_mismatch", async () => {
    const gateway = await seedGateway(t, 'bkash');
    const { brandId, apiKey } = await t.createBrand('Two phones');
    const counter = await pairDevice(t, { brandId });
    const office = await pairDevice(t, { brandId });
    await addAccount(brandId, { gateway: gateway.code, number: '01711000003', device_id: counter.deviceId });

    const payment = await createPayment(t, apiKey, { amount: '420.00', currency: 'BDT' });
    const trxId = newGatewayTrxId();
    await payAtCheckout(payment.payment_id, gateway.code, trxId);
    const [fromOffice] = await forwardSms(t, office, [{ sender: 'bKash', body: smsBodies.bkash('420.00', trxId) }]);
    expect(fromOffice!.match_status).toBe('low_confidence');
    const row = await smsRow(t, fromOffice!.id);
    expect(row.reason_code).toBe('account_mismatch');
    expect(row.reason).toMatch(/not the account's phone/);
    expect(await statusOf(payment.payment_id, apiKey)).toBe('awaiting_verification');

    // The account's own phone, but its SIM says it is another number.
    const other = await createPayment(t, apiKey, { amount: '430.00', currency: 'BDT' });
    const trx2 = newGatewayTrxId();
    await payAtCheckout(other.payment_id, gateway.code, trx2);
    const res = await t.request('POST', '/api/mobile/v1/sms/messages', {
      token: counter.accessToken,
      body: { messages: [{ device_message_id: `n-${trx2}`, sender: 'bKash', body: smsBodies.bkash('430.00', trx2), received_at: new Date().toISOString(), receiving_number: '01999000111' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data[0].match_status).toBe('low_confidence');
    expect((await smsRow(t, res.body.data[0].id)).reason_code).toBe('account_mismatch');
  });
});

describe("pull-on-submit asks the account's phone", () => {
  it("a submitted id no SMS proves asks only the phone bound to the payment's account", async () => {
    const gateway = await seedGateway(t, 'bkash');
    const { brandId, apiKey } = await t.createBrand('Pull account');
    const counter = await pairDevice(t, { brandId });
    const office = await pairDevice(t, { brandId });
    await addAccount(brandId, { gateway: gateway.code, number: '01711000061', device_id: office.deviceId });
    const payment = await createPayment(t, apiKey, { amount: '310.00', currency: 'BDT' });
    await payAtCheckout(payment.payment_id, gateway.code, newGatewayTrxId());
    const asked = await t.sql<{ device_id: string }>("SELECT device_id FROM backfill_requests WHERE brand_id = $1 AND reason = 'payment_submitted'", [brandId]);
    expect(asked.map((r) => Number(r.device_id))).toEqual([office.deviceId]);
    expect(counter.deviceId).not.toBe(office.deviceId);
  });
});

describe('one phone, two SIMs, a wallet on each', () => {
  async function dualSimScene() {
    const sender = `bK${newGatewayTrxId('').slice(0, 6)}`;
    const gateway = await seedGateway(t, 'bkash', { sms_senders: [sender], sms_templates: [creditTemplate, sendMoneyTemplate] });
    const { brandId, apiKey } = await t.createBrand('Dual SIM');
    const phone = await pairDevice(t, { brandId });
    return { gateway, brandId, apiKey, phone, sender };
  }

  async function payInto(scene: { apiKey: string; gateway: GatewayView }, amount: string, expectNumber: string) {
    const payment = await createPayment(t, scene.apiKey, { amount, currency: 'BDT' });
    expect((await checkoutGateway(payment.payment_id, scene.gateway.code))!.receiving_account).toBe(expectNumber);
    const trxId = newGatewayTrxId();
    await payAtCheckout(payment.payment_id, scene.gateway.code, trxId);
    return { paymentId: payment.payment_id, trxId };
  }

  async function forwardOn(phone: PairedDevice, slot: number, sender: string, body: string) {
    const res = await t.request('POST', '/api/mobile/v1/sms/messages', {
      token: phone.accessToken,
      body: { messages: [{ device_message_id: `s${slot}-${newGatewayTrxId('')}`, sender, body, received_at: new Date().toISOString(), sim_slot: slot }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data[0] as { id: number; match_status: string };
  }

  it('verifies payments on both SIMs, each on its own intact balance chain', async () => {
    const scene = await dualSimScene();
    // Only the SIM-0 account is free this round (limits), so the checkout's choice is known.
    const sim0 = await addAccount(scene.brandId, { gateway: scene.gateway.code, number: '01711000010', device_id: scene.phone.deviceId, sim_slot: 0 });
    const sim1 = await addAccount(scene.brandId, { gateway: scene.gateway.code, number: '01711000011', device_id: scene.phone.deviceId, sim_slot: 1 });
    const set = (id: number, enabled: boolean) => adminRequest(t, 'PATCH', `/wallet-accounts/${id}`, { enabled });

    // SIM 0's wallet holds 1,000; SIM 1's holds 50,000: one chain would break at every switch.
    await set(sim1.id, false);
    const p1 = await payInto(scene, '300.00', '01711000010');
    await set(sim1.id, true);
    await set(sim0.id, false);
    const p2 = await payInto(scene, '200.00', '01711000011');
    await set(sim0.id, true);
    await set(sim1.id, false);
    const p3 = await payInto(scene, '100.00', '01711000010');
    await set(sim1.id, true);
    await set(sim0.id, false);
    const p4 = await payInto(scene, '400.00', '01711000011');

    const s1 = await forwardOn(scene.phone, 0, scene.sender, creditWithBalance('300.00', p1.trxId, '1,300.00'));
    const s2 = await forwardOn(scene.phone, 1, scene.sender, creditWithBalance('200.00', p2.trxId, '50,200.00'));
    const s3 = await forwardOn(scene.phone, 0, scene.sender, creditWithBalance('100.00', p3.trxId, '1,400.00'));
    const s4 = await forwardOn(scene.phone, 1, scene.sender, creditWithBalance('400.00', p4.trxId, '50,600.00'));
    for (const s of [s1, s2, s3, s4]) expect(s.match_status).toBe('matched');
    expect((await smsRow(t, s1.id)).chain_state).toBe('first');
    // SIM 1 is an account's own slot: its first balance starts its own trusted chain.
    expect((await smsRow(t, s2.id)).chain_state).toBe('first');
    expect((await smsRow(t, s3.id)).chain_state).toBe('follows');
    expect((await smsRow(t, s4.id)).chain_state).toBe('follows');
    expect((await smsRow(t, s3.id)).chain_previous_id).toBe(String(s1.id));
    expect((await smsRow(t, s4.id)).chain_previous_id).toBe(String(s2.id));
    for (const p of [p1, p2, p3, p4]) expect(await statusOf(p.paymentId, scene.apiKey)).toBe('completed');
  });

  it("an SMS on the other SIM than the account's slot does not complete a payment into it", async () => {
    const scene = await dualSimScene();
    await addAccount(scene.brandId, { gateway: scene.gateway.code, number: '01711000020', device_id: scene.phone.deviceId, sim_slot: 0 });
    const p = await payInto(scene, '250.00', '01711000020');
    const s = await forwardOn(scene.phone, 1, scene.sender, creditWithBalance('250.00', p.trxId, '5,250.00'));
    expect(s.match_status).toBe('low_confidence');
    expect((await smsRow(t, s.id)).reason_code).toBe('account_mismatch');
    expect(await statusOf(p.paymentId, scene.apiKey)).toBe('awaiting_verification');
  });

  it('a wallet SMS on a second SIM that no account names starts an untrusted chain (new_sim): a person decides', async () => {
    const scene = await dualSimScene();
    // No account of the brand's own: the gateway's number, any phone, any slot (as before accounts).
    const payment = await createPayment(t, scene.apiKey, { amount: '150.00', currency: 'BDT' });
    const first = newGatewayTrxId();
    await payAtCheckout(payment.payment_id, scene.gateway.code, first);
    const s1 = await forwardOn(scene.phone, 0, scene.sender, creditWithBalance('150.00', first, '1,150.00'));
    expect(s1.match_status).toBe('matched');

    // A forged credit sent to the phone's other SIM: it cannot start a trusted chain of its own there.
    const victim = await createPayment(t, scene.apiKey, { amount: '9000.00', currency: 'BDT' });
    const forged = newGatewayTrxId();
    await payAtCheckout(victim.payment_id, scene.gateway.code, forged);
    const s2 = await forwardOn(scene.phone, 1, scene.sender, creditWithBalance('9000.00', forged, '9,000.00'));
    expect(s2.match_status).toBe('balance_mismatch');
    const row = await smsRow(t, s2.id);
    expect(row).toMatchObject({ chain_state: 'new_sim', reason_code: 'balance_new_sim' });
    expect(await statusOf(victim.payment_id, scene.apiKey)).toBe('awaiting_verification');
  });
});

describe('which account the checkout shows', () => {
  it('round robin among enabled accounts, the same account on every load of a payment, a full account skipped', async () => {
    const gateway = await seedGateway(t, 'bkash');
    const { brandId, apiKey } = await t.createBrand('Round robin');
    const first = await addAccount(brandId, { gateway: gateway.code, number: '01711000031', daily_limit: '1000.00' });
    await addAccount(brandId, { gateway: gateway.code, number: '01711000032' });
    const numbers: string[] = [];
    const payments: string[] = [];
    for (let i = 0; i < 3; i++) {
      const p = await createPayment(t, apiKey, { amount: '600.00', currency: 'BDT' });
      payments.push(p.payment_id);
      numbers.push((await checkoutGateway(p.payment_id, gateway.code))!.receiving_account!);
    }
    expect(numbers).toEqual(['01711000031', '01711000032', '01711000031']);
    // Sticky: a reload shows the same account.
    expect((await checkoutGateway(payments[1]!, gateway.code))!.receiving_account).toBe('01711000032');

    // 600 started on the limited account today: another 600 would pass its 1,000 limit.
    await payAtCheckout(payments[0]!, gateway.code, newGatewayTrxId());
    const next = await createPayment(t, apiKey, { amount: '600.00', currency: 'BDT' });
    expect((await checkoutGateway(next.payment_id, gateway.code))!.receiving_account).toBe('01711000032');
    const listed = await adminRequest(t, 'GET', accounts(brandId));
    expect(listed.body.data.find((a: { id: number }) => a.id === first.id)).toMatchObject({ used_today: '600.00', daily_limit: '1000.00' });
  });

  it('a gateway where every account of the brand is disabled is not offered, and cannot be paid on', async () => {
    const gateway = await seedGateway(t, 'bkash');
    const { brandId, apiKey } = await t.createBrand('All disabled');
    await addAccount(brandId, { gateway: gateway.code, number: '01711000041', enabled: false });
    const p = await createPayment(t, apiKey, { amount: '100.00', currency: 'BDT' });
    expect(await checkoutGateway(p.payment_id, gateway.code)).toBeUndefined();
    const res = await t.request('POST', `/api/checkout/v1/payments/${p.payment_id}/transactions`, { body: { gateway: gateway.code, gateway_trx_id: newGatewayTrxId() } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ code: 'GATEWAY_UNAVAILABLE', field: 'gateway' });
  });
});

describe('the admin API refuses what cannot be an account', () => {
  it('answers each failure in the envelope, naming the field, and stores nothing', async () => {
    const gateway = await seedGateway(t, 'bkash');
    const sandbox = await seedGateway(t, 'sandbox');
    const { brandId, apiKey } = await t.createBrand('Refusals');
    const other = await t.createBrand('Other');
    const otherPhone = await pairDevice(t, { brandId: other.brandId });
    const phone = await pairDevice(t, { brandId });
    const post = (body: Record<string, unknown>) => adminRequest(t, 'POST', accounts(brandId), body);

    const cases: Array<[Record<string, unknown>, number, string, string | null]> = [
      [{ gateway: gateway.code, number: 'call me' }, 400, 'VALIDATION_ERROR', 'number'],
      [{ gateway: gateway.code, number: '01711000051', sim_slot: 1 }, 400, 'VALIDATION_ERROR', 'sim_slot'],
      [{ gateway: gateway.code, number: '01711000051', device_id: otherPhone.deviceId }, 400, 'VALIDATION_ERROR', 'device_id'],
      [{ gateway: gateway.code, number: '01711000051', daily_limit: '0.00' }, 400, 'VALIDATION_ERROR', 'daily_limit'],
      [{ gateway: gateway.code, number: '01711000051', account_type: 'friend' }, 400, 'VALIDATION_ERROR', 'account_type'],
      [{ gateway: sandbox.code, number: '01711000051' }, 400, 'VALIDATION_ERROR', 'gateway'],
      [{ gateway: 'nope', number: '01711000051' }, 400, 'VALIDATION_ERROR', 'gateway'],
      [{ gateway: gateway.code, number: '01711000051', color: 'red' }, 400, 'VALIDATION_ERROR', null],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.success).toBe(false);
      expect(res.body.errors[0].code).toBe(code);
      if (field) expect(res.body.errors[0].field).toBe(field);
    }
    expect(await t.sql('SELECT id FROM wallet_accounts WHERE brand_id = $1', [brandId])).toEqual([]);

    const created = await addAccount(brandId, { gateway: gateway.code, number: '01711000051', device_id: phone.deviceId, sim_slot: 1 });
    const dup = await post({ gateway: gateway.code, number: '01711000051' });
    expect(dup.status).toBe(409);
    expect(dup.body.errors[0]).toMatchObject({ code: 'CONFLICT', field: 'number' });

    const missing = await adminRequest(t, 'GET', `/wallet-accounts/999999`);
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0].code).toBe('WALLET_ACCOUNT_NOT_FOUND');
    expect((await adminRequest(t, 'GET', `/brands/999999/wallet-accounts`)).status).toBe(404);

    // Moving it to another phone drops the slot; a revoked phone is refused.
    const moved = await adminRequest(t, 'PATCH', `/wallet-accounts/${created.id}`, { device_id: null });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ device_id: null, sim_slot: null });
    expect((await adminRequest(t, 'POST', `/devices/${phone.deviceId}/revocations`, {})).status).toBe(200);
    const revoked = await adminRequest(t, 'PATCH', `/wallet-accounts/${created.id}`, { device_id: phone.deviceId });
    expect(revoked.status).toBe(409);
    expect(revoked.body.errors[0]).toMatchObject({ code: 'DEVICE_REVOKED', field: 'device_id' });
    expect((await adminRequest(t, 'PATCH', `/wallet-accounts/${created.id}`, {})).status).toBe(400);

    // An account a payment was made into cannot be deleted; one without can.
    const used = await addAccount(brandId, { gateway: gateway.code, number: '01711000052' });
    await adminRequest(t, 'PATCH', `/wallet-accounts/${created.id}`, { enabled: false });
    const p = await createPayment(t, apiKey, { amount: '100.00', currency: 'BDT' });
    await payAtCheckout(p.payment_id, gateway.code, newGatewayTrxId());
    const refused = await adminRequest(t, 'DELETE', `/wallet-accounts/${used.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0].code).toBe('CONFLICT');
    expect((await adminRequest(t, 'DELETE', `/wallet-accounts/${created.id}`)).status).toBe(204);
    expect((await auditRows(t, 'wallet_account.create')).length).toBeGreaterThanOrEqual(2);
    expect((await auditRows(t, 'wallet_account.delete')).map((r) => r.target_id)).toContain(String(created.id));
  });
});
