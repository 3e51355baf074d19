import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { pairDevice } from '../support/device.ts';
import { requestRefund, seedCompletedTransaction, seedGateway } from '../support/seed.ts';
import { eventsOf, newGatewayTrxId, seedPayment, smsScene, transactionRow } from '../support/sms-matching.ts';
import { adminRequest, auditCount, auditRows } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

/** Makes every audit insert fail for the duration of `fn`: the change it records must not survive. */
async function withBrokenAuditLog(fn: () => Promise<void>): Promise<void> {
  await t.sql(`CREATE FUNCTION test_audit_refuses() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit store down'; END $$`);
  await t.sql('CREATE TRIGGER test_audit_refuses BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION test_audit_refuses()');
  try {
    await fn();
  } finally {
    await t.sql('DROP TRIGGER test_audit_refuses ON audit_log');
    await t.sql('DROP FUNCTION test_audit_refuses()');
  }
}

function expect500(res: { status: number; body: any }) {
  expect(res.status).toBe(500);
  expect(res.body.errors).toEqual([{ code: 'INTERNAL_ERROR', message: 'Internal server error', field: null }]);
}

describe('a change and its audit row commit together or not at all', () => {
  it('when the audit row cannot be written, the verification, refund completion, key, revocation and gateway change are all rolled back', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '700.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const { transaction: paid } = await seedCompletedTransaction(t, { apiKey: scene.apiKey, gateway: scene.gateway, amount: '900.00' });
    const refund = (await requestRefund(t, scene.apiKey, { trx_id: paid.trxId, amount: '100.00' })).body.data;
    const device = await pairDevice(t, { brandId: scene.brandId });
    const keysBefore = await t.sql('SELECT id FROM api_keys WHERE brand_id = $1', [scene.brandId]);

    await withBrokenAuditLog(async () => {
      expect500(await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, {}));
      expect500(await adminRequest(t, 'POST', `/transactions/${transaction.id}/rejections`, { reason: 'no' }));
      expect500(await adminRequest(t, 'POST', `/refunds/${refund.id}/completions`, { reference: 'BK7RETURN01' }));
      expect500(await adminRequest(t, 'POST', `/brands/${scene.brandId}/api-keys`, { name: 'never' }));
      expect500(await adminRequest(t, 'POST', `/devices/${device.deviceId}/revocations`));
      expect500(await adminRequest(t, 'PATCH', `/gateways/${scene.gateway.code}`, { fee_percent: '9.99' }));
    });

    expect(await transactionRow(t, transaction.id)).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: trxId, completed_at: null });
    expect(await eventsOf(t, transaction.id)).toEqual([]);
    expect((await t.sql<{ status: string }>('SELECT status FROM refunds WHERE id = $1', [refund.id]))[0]!.status).toBe('pending');
    expect(await eventsOf(t, paid.id)).toEqual(['payment.completed']);
    expect(await t.sql('SELECT id FROM api_keys WHERE brand_id = $1', [scene.brandId])).toEqual(keysBefore);
    expect((await t.sql<{ status: string }>('SELECT status FROM devices WHERE id = $1', [device.deviceId]))[0]!.status).toBe('active');
    expect((await adminRequest(t, 'GET', `/gateways/${scene.gateway.code}`)).body.data.fee_percent).toBe('1.85');
    expect(await auditCount(t)).toBe(0);
    // The webhook jobs of the rolled-back changes were never enqueued either.
    expect(await t.sql("SELECT id FROM webhook_events WHERE event IN ('payment.completed', 'refund.completed') AND transaction_id = $1", [transaction.id])).toEqual([]);

    // With the log back, the same requests succeed and are recorded once each.
    expect((await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, {})).status).toBe(200);
    expect((await adminRequest(t, 'POST', `/refunds/${refund.id}/completions`, { reference: 'BK7RETURN01' })).status).toBe(200);
    expect((await auditRows(t)).map((r) => r.action)).toEqual(['transaction.verify', 'refund.complete']);
  });
});

describe('racing admins', () => {
  it('five verifications of one transaction at once: one wins, the others are INVALID_STATE; one event, one audit row', async () => {
    const scene = await smsScene(t);
    const { transaction } = await seedPayment(t, scene, { amount: '250.00', status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });
    const results = await Promise.all(Array.from({ length: 5 }, () => adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, {})));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
    expect((await auditRows(t, 'transaction.verify')).filter((r) => r.target_id === String(transaction.id))).toHaveLength(1);
  });

  it('five completions of one refund at once: all answer completed, one event, one audit row', async () => {
    const { brandId, apiKey } = await t.createBrand('Race Refund Brand');
    const gateway = await seedGateway(t, 'bkash');
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway, amount: '500.00' });
    const refund = (await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '500.00' })).body.data;
    const results = await Promise.all(Array.from({ length: 5 }, () => adminRequest(t, 'POST', `/refunds/${refund.id}/completions`, { reference: 'BK7RETURN01' })));
    expect(results.map((r) => [r.status, r.body.data.status])).toEqual(Array.from({ length: 5 }, () => [200, 'completed']));
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed', 'refund.completed']);
    const rows = (await auditRows(t, 'refund.complete')).filter((r) => r.target_id === String(refund.id));
    expect(rows.map((r) => [r.brand_id, r.before!.status, r.after!.status])).toEqual([[String(brandId), 'pending', 'completed']]);
  });

  it('concurrent fee changes to one gateway apply one after the other: each audit row starts where the previous ended', async () => {
    const gateway = await seedGateway(t, 'bkash');
    const fees = ['1.00', '2.00', '3.00', '4.00', '5.00', '6.00'];
    const results = await Promise.all(fees.map((fee) => adminRequest(t, 'PATCH', `/gateways/${gateway.code}`, { fee_fixed: fee })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const chain = (await auditRows(t, 'gateway.update')).filter((r) => r.target_id === gateway.code).map((r) => [r.before!.fee_fixed, r.after!.fee_fixed]);
    expect(chain).toHaveLength(fees.length);
    expect(chain[0]![0]).toBe('0.00');
    for (let i = 1; i < chain.length; i++) expect(chain[i]![0]).toBe(chain[i - 1]![1]);
    expect(chain.map((c) => c[1]).sort()).toEqual(fees);
    expect((await adminRequest(t, 'GET', `/gateways/${gateway.code}`)).body.data.fee_fixed).toBe(chain[chain.length - 1]![1]);
  });
});

describe('reading the audit log', () => {
  it('newest first, filtered by brand, action, target type and id, paged', async () => {
    const { brandId } = await t.createBrand('Audit Reader');
    const k1 = (await adminRequest(t, 'POST', `/brands/${brandId}/api-keys`, { name: 'one' })).body.data;
    const k2 = (await adminRequest(t, 'POST', `/brands/${brandId}/api-keys`, { name: 'two' }, { 'x-admin-actor': 'bob' })).body.data;
    await adminRequest(t, 'POST', `/brands/${brandId}/api-keys/${k1.id}/revocations`);
    const all = await adminRequest(t, 'GET', `/audit-log?brand_id=${brandId}`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((e: { action: string; target_id: string }) => [e.action, e.target_id])).toEqual([
      ['api_key.revoke', String(k1.id)],
      ['api_key.create', String(k2.id)],
      ['api_key.create', String(k1.id)],
    ]);
    expect(all.body.data[1]).toEqual({
      id: expect.any(Number),
      actor: 'admin:bob',
      action: 'api_key.create',
      target_type: 'api_key',
      target_id: String(k2.id),
      brand_id: brandId,
      before: null,
      after: { prefix: k2.prefix, mode: 'live', dialect: 'native', scopes: null, expires_at: null, revoked: false },
      request_id: expect.stringMatching(/^req_/),
      created_at: expect.stringMatching(/Z$/),
    });
    const q = async (query: string) => (await adminRequest(t, 'GET', `/audit-log?brand_id=${brandId}&${query}`)).body;
    expect((await q('action=api_key.revoke')).data.map((e: { target_id: string }) => e.target_id)).toEqual([String(k1.id)]);
    expect((await q(`target_type=api_key&target_id=${k2.id}`)).data.map((e: { action: string }) => e.action)).toEqual(['api_key.create']);
    expect((await q('per_page=1&page=3')).data.map((e: { target_id: string }) => e.target_id)).toEqual([String(k1.id)]);
    expect((await q('per_page=1&page=3')).meta).toEqual({ page: 3, per_page: 1, total: 3, total_pages: 3 });
  });

  it('bad filters: 400 naming the parameter', async () => {
    for (const [query, field] of [['per_page=0', 'per_page'], ['brand_id=abc', 'brand_id'], ['action=', 'action'], ['actor=bob', 'actor']]) {
      const res = await adminRequest(t, 'GET', `/audit-log?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
  });
});
