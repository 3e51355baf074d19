import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, transactionRow } from '../support/sms-matching.ts';
import { adminRequest, auditCount, auditRows } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

describe('transactions: list and get', () => {
  it('lists every brand’s or one brand’s, filtered by status, gateway, reference and date, paged', async () => {
    const a = await smsScene(t);
    const b = await smsScene(t);
    const trx = newGatewayTrxId();
    const waiting = await seedPayment(t, a, { amount: '120.00', status: 'awaiting_verification', gatewayTrxId: trx });
    const done = await seedPayment(t, a, { amount: '80.00', status: 'completed' });
    const other = await seedPayment(t, b, { amount: '60.00', status: 'failed' });

    const ofA = await adminRequest(t, 'GET', `/transactions?brand_id=${a.brandId}`);
    expect(ofA.status).toBe(200);
    expect(ofA.body.data.map((x: { id: number }) => x.id)).toEqual([done.transaction.id, waiting.transaction.id]);
    expect(ofA.body.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 });
    expect(ofA.body.data[1]).toEqual({
      id: waiting.transaction.id,
      trx_id: waiting.transaction.trxId,
      payment_id: waiting.paymentId,
      brand_id: a.brandId,
      mode: 'live',
      gateway: a.gateway.code,
      gateway_type: 'manual',
      method: 'send_money',
      gateway_trx_id: trx,
      amount: '120.00',
      currency: 'BDT',
      fee: '2.22',
      exchange_rate: null,
      requested_amount: '120.00',
      requested_currency: 'BDT',
      reference: expect.any(String),
      sender_number: null,
      status: 'awaiting_verification',
      failure_reason: null,
      completion_source: null,
      created_at: expect.any(String),
      completed_at: null,
      wallet_account: null,
    });
    const q = async (query: string) => (await adminRequest(t, 'GET', `/transactions?${query}`)).body.data.map((x: { id: number }) => x.id);
    expect(await q(`status=failed&brand_id=${b.brandId}`)).toEqual([other.transaction.id]);
    expect(await q(`gateway=${a.gateway.code}&status=completed`)).toEqual([done.transaction.id]);
    expect(await q(`trx_id=${trx.toLowerCase()}`)).toEqual([waiting.transaction.id]);
    expect(await q(`trx_id=${done.transaction.trxId}`)).toEqual([done.transaction.id]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await q(`brand_id=${a.brandId}&from=${today}&to=${today}`)).toHaveLength(2);
    expect(await q(`brand_id=${a.brandId}&to=2020-12-31`)).toEqual([]);
    const page2 = await adminRequest(t, 'GET', `/transactions?brand_id=${a.brandId}&per_page=1&page=2`);
    expect(page2.body.data.map((x: { id: number }) => x.id)).toEqual([waiting.transaction.id]);
    expect(page2.body.meta).toEqual({ page: 2, per_page: 1, total: 2, total_pages: 2 });
  });

  it('get shows the SMS evidence: the matched record and records listing it as a candidate (no SMS text)', async () => {
    const scene = await smsScene(t);
    const first = await seedPayment(t, scene, { amount: '450.00' });
    const second = await seedPayment(t, scene, { amount: '450.00' });
    const body = smsBodies.bkash('450.00', newGatewayTrxId());
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body }]);
    expect(sms!.match_status).toBe('low_confidence');
    const res = await adminRequest(t, 'GET', `/transactions/${first.transaction.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.sms_records).toEqual([
      { id: sms!.id, match_status: 'low_confidence', role: 'candidate', parsed_amount: '450.00', parsed_trx_id: expect.any(String), confidence: '0', received_at: expect.any(String) },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('You have received');
    expect((await adminRequest(t, 'GET', `/transactions/${second.transaction.id}`)).body.data.sms_records.map((r: { id: number }) => r.id)).toEqual([sms!.id]);
  });

  it('errors: unknown 404, bad filters 400', async () => {
    const missing = await adminRequest(t, 'GET', '/transactions/999999');
    expect(missing.status).toBe(404);
    expect(missing.body.errors).toEqual([{ code: 'TRANSACTION_NOT_FOUND', message: 'Transaction not found', field: null }]);
    for (const [query, field] of [['status=paid', 'status'], ['from=21-11-2026', 'from'], ['from=2026-11-02&to=2026-11-01', 'to'], ['per_page=500', 'per_page'], ['brand=1', 'brand']]) {
      const res = await adminRequest(t, 'GET', `/transactions?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
  });
});

describe('manual verification', () => {
  it('low_confidence: the admin names the transaction and the SMS; completed with payment.completed, the SMS matched and signed, one audit row', async () => {
    const scene = await smsScene(t);
    const first = await seedPayment(t, scene, { amount: '450.00' });
    const second = await seedPayment(t, scene, { amount: '450.00' });
    const trxId = newGatewayTrxId();
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('450.00', trxId) }]);
    const res = await adminRequest(t, 'POST', `/transactions/${first.transaction.id}/verifications`, { sms_record_id: sms!.id, note: 'screenshot checked' }, { 'x-admin-actor': 'rahim' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: first.transaction.id, status: 'completed', completion_source: 'admin', gateway_trx_id: trxId, completed_at: expect.any(String) });
    expect(await eventsOf(t, first.transaction.id)).toEqual(['payment.completed']);
    expect(await smsRow(t, sms!.id)).toMatchObject({ match_status: 'matched', transaction_id: String(first.transaction.id), resolution: 'verified', resolved_by: 'admin:rahim', resolution_note: 'screenshot checked' });
    expect((await transactionRow(t, second.transaction.id)).status).toBe('pending');
    const rows = (await auditRows(t, 'transaction.verify')).filter((r) => r.target_id === String(first.transaction.id));
    expect(rows.map((r) => [r.actor, r.brand_id, r.before, r.after])).toEqual([
      [
        'admin:rahim',
        String(scene.brandId),
        { status: 'pending', amount: '450.00', currency: 'BDT', gateway_trx_id: null },
        { status: 'completed', amount: '450.00', currency: 'BDT', gateway_trx_id: trxId, sms_record_id: sms!.id, note: 'screenshot checked' },
      ],
    ]);
  });

  it('without an SMS: completed on the admin’s word; verifying again is INVALID_STATE and records nothing', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '980.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const res = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'completed', gateway_trx_id: trxId });
    const audits = await auditCount(t);
    const again = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, {});
    expect(again.status).toBe(409);
    expect(again.body.errors[0]).toMatchObject({ code: 'INVALID_STATE' });
    expect(await auditCount(t)).toBe(audits);
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
  });

  it('evidence that does not fit: SMS_EVIDENCE_MISMATCH; another brand’s SMS: SMS_RECORD_NOT_FOUND; nothing changes', async () => {
    const scene = await smsScene(t);
    const foreign = await smsScene(t);
    const { transaction } = await seedPayment(t, scene, { amount: '300.00' });
    const [other] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('301.00', newGatewayTrxId()) }]);
    const [theirs] = await forwardSms(t, foreign.device, [{ sender: 'bKash', body: smsBodies.bkash('300.00', newGatewayTrxId()) }]);
    const audits = await auditCount(t);
    const mismatch = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, { sms_record_id: other!.id });
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.errors[0]).toMatchObject({ code: 'SMS_EVIDENCE_MISMATCH', field: 'sms_record_id' });
    const notFound = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, { sms_record_id: theirs!.id });
    expect(notFound.status).toBe(404);
    expect(notFound.body.errors[0]).toMatchObject({ code: 'SMS_RECORD_NOT_FOUND', field: 'sms_record_id' });
    expect((await transactionRow(t, transaction.id)).status).toBe('pending');
    expect(await eventsOf(t, transaction.id)).toEqual([]);
    expect(await auditCount(t)).toBe(audits);
  });
});

describe('rejection', () => {
  it('fails the transaction with payment.failed, frees its gateway trx id, one audit row; rejecting again is INVALID_STATE', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction, paymentId } = await seedPayment(t, scene, { amount: '1500.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const res = await adminRequest(t, 'POST', `/transactions/${transaction.id}/rejections`, { reason: 'Paid amount does not match the order' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: 'Paid amount does not match the order', gateway_trx_id: null });
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.failed']);
    expect((await t.request('GET', `/api/v1/payments/${paymentId}`, { token: scene.apiKey })).body.data.status).toBe('failed');
    const [row] = (await auditRows(t, 'transaction.reject')).filter((r) => r.target_id === String(transaction.id));
    expect([row!.before, row!.after]).toEqual([
      { status: 'awaiting_verification', amount: '1500.00', currency: 'BDT', gateway_trx_id: trxId },
      { status: 'failed', amount: '1500.00', currency: 'BDT', gateway_trx_id: null, resolved_sms_record_ids: [], reason: 'Paid amount does not match the order' },
    ]);
    const again = await adminRequest(t, 'POST', `/transactions/${transaction.id}/rejections`, { reason: 'again' });
    expect(again.status).toBe(409);
    expect(again.body.errors[0].code).toBe('INVALID_STATE');
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.failed']);
  });

  it('bad input: 400 naming the field; unknown transaction: 404; nothing changes', async () => {
    const scene = await smsScene(t);
    const { transaction } = await seedPayment(t, scene, { amount: '50.00' });
    const audits = await auditCount(t);
    for (const [path, body, field] of [
      ['rejections', {}, 'reason'],
      ['rejections', { reason: '  ' }, 'reason'],
      ['rejections', { reason: 'x'.repeat(501) }, 'reason'],
      ['verifications', { sms_record_id: 'abc' }, 'sms_record_id'],
      ['verifications', { sms_record_id: 0 }, 'sms_record_id'],
      ['verifications', { amount: '50.00' }, 'amount'],
    ] as const) {
      const res = await adminRequest(t, 'POST', `/transactions/${transaction.id}/${path}`, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    for (const path of ['verifications', 'rejections']) {
      const res = await adminRequest(t, 'POST', `/transactions/999999/${path}`, path === 'rejections' ? { reason: 'x' } : {});
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('TRANSACTION_NOT_FOUND');
    }
    expect((await transactionRow(t, transaction.id)).status).toBe('pending');
    expect(await auditCount(t)).toBe(audits);
  });
});
