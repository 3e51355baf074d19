import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, requestRefund, seedCompletedTransaction, seedGateway } from '../support/seed.ts';
import { forwardSms, newGatewayTrxId, officialSender, seedPayment, smsBodies, smsScene } from '../support/sms-matching.ts';
import { adminRequest, auditCount, auditRows } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const events = async (transactionId: number) =>
  (await t.sql<{ event: string }>('SELECT event FROM webhook_events WHERE transaction_id = $1 ORDER BY id', [transactionId])).map((r) => r.event);

async function refundScene(amount = '500.00') {
  const { brandId, apiKey } = await t.createBrand('Refund Brand');
  const gateway = await seedGateway(t, 'bkash');
  const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway, amount });
  const refund = async (value: string) => {
    const res = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: value, reason: 'damaged' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: number; status: string };
  };
  return { brandId, apiKey, transaction, refund };
}

describe('refunds', () => {
  it('list across brands and per brand with the merchant filters; get one', async () => {
    const a = await refundScene();
    const b = await refundScene();
    const ra = await a.refund('100.00');
    const rb = await b.refund('50.00');
    const all = await adminRequest(t, 'GET', '/refunds?status=pending');
    expect(all.status).toBe(200);
    expect(all.body.data.map((r: { id: number }) => r.id)).toEqual(expect.arrayContaining([ra.id, rb.id]));
    const ofA = await adminRequest(t, 'GET', `/refunds?brand_id=${a.brandId}`);
    expect(ofA.body.data).toEqual([expect.objectContaining({ id: ra.id, brand_id: a.brandId, amount: '100.00', currency: 'BDT', status: 'pending', trx_id: a.transaction.trxId, reason: 'damaged' })]);
    expect(ofA.body.meta).toEqual({ page: 1, per_page: 20, total: 1, total_pages: 1 });
    expect((await adminRequest(t, 'GET', `/refunds?trx_id=${b.transaction.trxId}`)).body.data.map((r: { id: number }) => r.id)).toEqual([rb.id]);
    expect((await adminRequest(t, 'GET', `/refunds?transaction_id=${a.transaction.id}&status=completed`)).body.data).toEqual([]);
    expect((await adminRequest(t, 'GET', `/refunds/${ra.id}`)).body.data).toEqual(ofA.body.data[0]);
  });

  it('complete: pending -> completed with the wallet reference and note, refund.completed, audited once; a repeat changes nothing; failing it then is INVALID_STATE', async () => {
    const s = await refundScene();
    const r = await s.refund('200.00');
    expect((await adminRequest(t, 'GET', `/refunds/${r.id}`)).body.data).toMatchObject({ gateway_type: 'manual', completion_reference: null, completion_note: null });
    const done = await adminRequest(t, 'POST', `/refunds/${r.id}/completions`, { reference: ' BK9RET0001 ', note: ' Sent back from the shop wallet ' });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data).toMatchObject({
      id: r.id, status: 'completed', processed_at: expect.any(String), brand_id: s.brandId, completion_reference: 'BK9RET0001', completion_note: 'Sent back from the shop wallet',
    });
    expect((await adminRequest(t, 'GET', `/refunds/${r.id}`)).body.data).toMatchObject({ completion_reference: 'BK9RET0001', completion_note: 'Sent back from the shop wallet' });
    // A repeat (even without a reference, or with another one) changes nothing: the first record stays.
    const again = await adminRequest(t, 'POST', `/refunds/${r.id}/completions`, {});
    expect(again.body.data).toMatchObject({ status: 'completed', completion_reference: 'BK9RET0001' });
    expect((await adminRequest(t, 'POST', `/refunds/${r.id}/completions`, { reference: 'OTHER' })).body.data.completion_reference).toBe('BK9RET0001');
    const conflict = await adminRequest(t, 'POST', `/refunds/${r.id}/failures`, { reason: 'bank said no' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.errors).toEqual([{ code: 'INVALID_STATE', message: 'Refund is already completed', field: null }]);
    expect(await events(s.transaction.id)).toEqual(['payment.completed', 'refund.completed']);
    // The merchant's webhook carries the refund, not the operator's record.
    const [event] = await t.sql<{ payload: unknown }>("SELECT payload FROM webhook_events WHERE transaction_id = $1 AND event = 'refund.completed'", [s.transaction.id]);
    expect(JSON.stringify(event)).not.toContain('BK9RET0001');
    const rows = (await auditRows(t)).filter((x) => x.target_type === 'refund' && x.target_id === String(r.id));
    expect(rows.map((x) => [x.action, x.brand_id, x.before, x.after])).toEqual([
      [
        'refund.complete',
        String(s.brandId),
        { status: 'pending', amount: '200.00', currency: 'BDT', transaction_id: s.transaction.id },
        { status: 'completed', amount: '200.00', currency: 'BDT', transaction_id: s.transaction.id, completion_reference: 'BK9RET0001', completion_note: 'Sent back from the shop wallet' },
      ],
    ]);
  });

  it('complete: a manual gateway refund without a wallet reference is refused (400 on reference) and stays pending; the note is optional', async () => {
    const s = await refundScene();
    const r = await s.refund('20.00');
    const audits = await auditCount(t);
    for (const body of [undefined, {}, { note: 'paid' }, { reference: '   ' }, { reference: 'x'.repeat(101) }, { reference: 'BK1', note: 'n'.repeat(501) }]) {
      const res = await adminRequest(t, 'POST', `/refunds/${r.id}/completions`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].code, JSON.stringify(body)).toBe('VALIDATION_ERROR');
      expect(res.body.errors[0].field, JSON.stringify(body)).toBe(body && 'note' in body && body.reference ? 'note' : 'reference');
    }
    expect((await adminRequest(t, 'GET', `/refunds/${r.id}`)).body.data).toMatchObject({ status: 'pending', completion_reference: null });
    expect(await events(s.transaction.id)).toEqual(['payment.completed']);
    expect(await auditCount(t)).toBe(audits);
    const done = await adminRequest(t, 'POST', `/refunds/${r.id}/completions`, { reference: 'BK2RET', note: '  ' });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ status: 'completed', completion_reference: 'BK2RET', completion_note: null });
  });

  it('fail: pending -> failed with the reason and refund.failed; the amount is refundable again', async () => {
    const s = await refundScene('300.00');
    const r = await s.refund('300.00');
    expect((await requestRefund(t, s.apiKey, { trx_id: s.transaction.trxId, amount: '1.00' })).status).toBe(422);
    const failed = await adminRequest(t, 'POST', `/refunds/${r.id}/failures`, { reason: ' account closed ' });
    expect(failed.status).toBe(200);
    expect(failed.body.data).toMatchObject({ status: 'failed', failure_reason: 'account closed' });
    expect(await events(s.transaction.id)).toEqual(['payment.completed', 'refund.failed']);
    expect((await requestRefund(t, s.apiKey, { trx_id: s.transaction.trxId, amount: '300.00' })).status).toBe(201);
    const [row] = (await auditRows(t, 'refund.fail')).filter((x) => x.target_id === String(r.id));
    expect([row!.before!.status, row!.after!.status]).toEqual(['pending', 'failed']);
    expect(JSON.stringify(row)).not.toContain('account closed');
  });

  it('errors: unknown refund 404, missing reason or unknown fields 400, bad filters 400; nothing changes', async () => {
    const s = await refundScene();
    const r = await s.refund('10.00');
    const audits = await auditCount(t);
    for (const [method, path, body] of [
      ['GET', '/refunds/999999', undefined],
      ['POST', '/refunds/999999/completions', undefined],
      ['POST', '/refunds/999999/failures', { reason: 'x' }],
    ] as const) {
      const res = await adminRequest(t, method, path, body);
      expect(res.status, path).toBe(404);
      expect(res.body.errors[0].code).toBe('REFUND_NOT_FOUND');
    }
    for (const [path, body, field] of [
      [`/refunds/${r.id}/failures`, {}, 'reason'],
      [`/refunds/${r.id}/failures`, { reason: '   ' }, 'reason'],
      [`/refunds/${r.id}/completions`, { reference: 'BK1', extra: 'x' }, 'extra'],
    ] as const) {
      const res = await adminRequest(t, 'POST', path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    for (const [query, field] of [['status=done', 'status'], ['per_page=0', 'per_page'], ['from=2026-13-01', 'from'], ['brand_id=x', 'brand_id']]) {
      const res = await adminRequest(t, 'GET', `/refunds?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    expect((await adminRequest(t, 'GET', `/refunds/${r.id}`)).body.data.status).toBe('pending');
    expect(await auditCount(t)).toBe(audits);
  });
});

describe('SMS data records', () => {
  it('list by match status, brand and device with parsed fields and candidates, never the text unless asked', async () => {
    const scene = await smsScene(t);
    const trx = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '750.00', status: 'awaiting_verification', gatewayTrxId: trx });
    const [matched, noMatch, noCandidate] = await forwardSms(t, scene.device, [
      { sender: officialSender.bkash, body: smsBodies.bkash('750.00', trx) },
      // From the official sender (others are screened out and never stored), but no template reads it.
      { sender: officialSender.bkash, body: `You have received a gift voucher. TrxID ${newGatewayTrxId()}` },
      { sender: officialSender.bkash, body: smsBodies.bkash('99.00', newGatewayTrxId()) },
    ]);
    expect([matched!.match_status, noMatch!.match_status, noCandidate!.match_status]).toEqual(['matched', 'no_match', 'no_candidate']);

    const list = await adminRequest(t, 'GET', `/sms-records?brand_id=${scene.brandId}`);
    expect(list.status).toBe(200);
    expect(list.body.meta.total).toBe(3);
    expect(JSON.stringify(list.body)).not.toContain('You have received');
    const byId = Object.fromEntries(list.body.data.map((r: { id: number }) => [r.id, r]));
    expect(byId[matched!.id]).toMatchObject({
      brand_id: scene.brandId,
      device_id: scene.device.deviceId,
      sender: 'bKash',
      match_status: 'matched',
      gateway: scene.gateway.code,
      parsed_amount: '750.00',
      parsed_trx_id: trx,
      transaction_id: transaction.id,
      trx_id: transaction.trxId,
      matched_at: expect.any(String),
      resolution: null,
    });
    expect(Object.keys(byId[matched!.id])).not.toContain('body');
    expect(byId[noMatch!.id]).toMatchObject({ match_status: 'no_match', gateway: null, parsed_amount: null, candidate_ids: [] });
    const filtered = await adminRequest(t, 'GET', `/sms-records?match_status=no_candidate&device_id=${scene.device.deviceId}`);
    expect(filtered.body.data.map((r: { id: number }) => r.id)).toEqual([noCandidate!.id]);
  });

  it('include=body decrypts the text and records the read (ids only) in the audit log', async () => {
    const scene = await smsScene(t);
    const body = smsBodies.bkash('42.00', newGatewayTrxId());
    const [sms] = await forwardSms(t, scene.device, [{ sender: officialSender.bkash, body }]);
    const one = await adminRequest(t, 'GET', `/sms-records/${sms!.id}?include=body`, undefined, { 'x-admin-actor': 'reviewer' });
    expect(one.status).toBe(200);
    expect(one.body.data.body).toBe(body);
    const list = await adminRequest(t, 'GET', `/sms-records?brand_id=${scene.brandId}&include=body`);
    expect(list.body.data.map((r: { body: string }) => r.body)).toEqual([body]);
    const rows = (await auditRows(t, 'sms_record.read_body')).filter((r) => r.brand_id === String(scene.brandId));
    expect(rows.map((r) => [r.actor, r.target_id, r.after])).toEqual([
      ['admin:reviewer', String(sms!.id), { sms_record_ids: [sms!.id] }],
      ['admin', String(sms!.id), { sms_record_ids: [sms!.id] }],
    ]);
    expect(JSON.stringify(rows)).not.toContain('42.00');
    expect((await adminRequest(t, 'GET', `/sms-records/${sms!.id}`)).body.data.body).toBeUndefined();
  });

  it('errors: unknown record 404; bad filters 400', async () => {
    const res = await adminRequest(t, 'GET', '/sms-records/999999');
    expect(res.status).toBe(404);
    expect(res.body.errors[0].code).toBe('SMS_RECORD_NOT_FOUND');
    for (const [query, field] of [['match_status=unknown', 'match_status'], ['include=text', 'include'], ['device_id=-1', 'device_id'], ['to=2026-1-1', 'to']]) {
      const bad = await adminRequest(t, 'GET', `/sms-records?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body.errors[0].field).toBe(field);
    }
    expect((await adminRequest(t, 'GET', '/sms-records/1?include=all')).body.errors[0].field).toBe('include');
  });
});

describe('payments with no transaction yet', () => {
  it('found by merchant reference or payment id, in their mode and brand; a paid one is left to the transaction search', async () => {
    const { brandId, apiKey } = await t.createBrand('Unpaid Brand');
    const { apiKey: testKey } = await t.createBrand('Unpaid Test Brand', { mode: 'test' });
    const gateway = await seedGateway(t, 'bkash');
    const unpaid = await createPayment(t, apiKey, { amount: '321.00', reference: 'order-unpaid-1' });
    const inTest = await createPayment(t, testKey, { amount: '12.00', reference: 'order-unpaid-1' });
    const { paymentId: paidId } = await seedCompletedTransaction(t, { apiKey, gateway, amount: '99.00' });

    // The transaction search cannot find it: it has no transaction.
    expect((await adminRequest(t, 'GET', '/transactions?reference=order-unpaid-1')).body.data).toEqual([]);

    const byRef = await adminRequest(t, 'GET', '/payments/unpaid?reference=order-unpaid-1&mode=live');
    expect(byRef.status, JSON.stringify(byRef.body)).toBe(200);
    expect(byRef.body.data).toEqual([
      {
        payment_id: unpaid.payment_id, brand_id: brandId, mode: 'live', amount: '321.00', currency: 'BDT', reference: 'order-unpaid-1', status: 'pending',
        created_at: expect.any(String), expires_at: unpaid.expires_at,
      },
    ]);
    const both = await adminRequest(t, 'GET', '/payments/unpaid?reference=order-unpaid-1');
    expect(both.body.data.map((p: { payment_id: string }) => p.payment_id)).toEqual([inTest.payment_id, unpaid.payment_id]);
    expect((await adminRequest(t, 'GET', `/payments/unpaid?reference=${unpaid.payment_id.toUpperCase()}`)).body.data.map((p: { payment_id: string }) => p.payment_id)).toEqual([unpaid.payment_id]);
    expect((await adminRequest(t, 'GET', `/payments/unpaid?reference=order-unpaid-1&brand_id=${brandId + 100000}`)).body.data).toEqual([]);
    // A payment with a transaction is the transaction search's.
    expect((await adminRequest(t, 'GET', `/payments/unpaid?reference=${paidId}`)).body.data).toEqual([]);
    // Expired by time shows as expired.
    await t.sql("UPDATE payment_intents SET expires_at = now() - interval '1 minute' WHERE uuid = $1", [unpaid.payment_id]);
    expect((await adminRequest(t, 'GET', '/payments/unpaid?reference=order-unpaid-1&mode=live')).body.data[0].status).toBe('expired');
    for (const query of ['', 'reference=', 'reference=x&mode=demo', 'reference=x&other=1']) {
      const res = await adminRequest(t, 'GET', `/payments/unpaid?${query}`);
      expect(res.status, query).toBe(400);
    }
  });
});
