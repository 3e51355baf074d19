import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, transactionRow } from '../support/sms-matching.ts';
import { adminRequest, auditCount, auditRows, runCli } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const waiting = async (brandId: number) => {
  const res = await adminRequest(t, 'GET', `/sms-records?brand_id=${brandId}&needs_review=true`);
  expect(res.status).toBe(200);
  return res.body.data.map((r: { id: number }) => r.id) as number[];
};

describe('the SMS half of the review queue empties as people decide', () => {
  it('needs_review=true lists only unresolved records left for a person; a dismissal takes one out, audited, and completes nothing', async () => {
    const scene = await smsScene(t);
    const a = await seedPayment(t, scene, { amount: '450.00' });
    await seedPayment(t, scene, { amount: '450.00' });
    const [ambiguous] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('450.00', newGatewayTrxId()) }]);
    const [unclaimed] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('77.00', newGatewayTrxId()) }]);
    const certainTrx = newGatewayTrxId();
    const certain = await seedPayment(t, scene, { amount: '90.00', status: 'awaiting_verification', gatewayTrxId: certainTrx });
    const [matched] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('90.00', certainTrx) }]);
    expect([ambiguous!.match_status, unclaimed!.match_status, matched!.match_status]).toEqual(['low_confidence', 'no_candidate', 'matched']);

    expect((await waiting(scene.brandId)).sort()).toEqual([ambiguous!.id, unclaimed!.id].sort());
    const others = await adminRequest(t, 'GET', `/sms-records?brand_id=${scene.brandId}&needs_review=false`);
    expect(others.body.data.map((r: { id: number }) => r.id)).toEqual([matched!.id]);

    const audits = await auditCount(t);
    const res = await adminRequest(t, 'POST', `/sms-records/${unclaimed!.id}/dismissals`, { reason: 'owner’s personal transfer' }, { 'x-admin-actor': 'rahim' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: unclaimed!.id, match_status: 'no_candidate', resolution: 'dismissed', resolved_by: 'admin:rahim', resolution_note: 'owner’s personal transfer' });
    expect(typeof res.body.data.resolved_at).toBe('string');
    expect(await waiting(scene.brandId)).toEqual([ambiguous!.id]);
    expect(await auditCount(t)).toBe(audits + 1);
    const audit = (await auditRows(t, 'sms_record.dismiss')).at(-1);
    expect(audit).toMatchObject({ actor: 'admin:rahim', target_id: String(unclaimed!.id) });
    // Nothing completed or failed.
    expect((await transactionRow(t, a.transaction.id)).status).toBe('pending');
    expect(await eventsOf(t, a.transaction.id)).toEqual([]);
    expect(certain.transaction.id).toBeGreaterThan(0);
  });

  it('refusals: already dismissed, matched, unknown, empty reason; nothing changes', async () => {
    const scene = await smsScene(t);
    const trx = newGatewayTrxId();
    await seedPayment(t, scene, { amount: '60.00', status: 'awaiting_verification', gatewayTrxId: trx });
    const [matched] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('60.00', trx) }]);
    const [open] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('61.00', newGatewayTrxId()) }]);
    expect(await adminRequest(t, 'POST', `/sms-records/${open!.id}/dismissals`, { reason: 'test message' })).toMatchObject({ status: 200 });
    const audits = await auditCount(t);

    const again = await adminRequest(t, 'POST', `/sms-records/${open!.id}/dismissals`, { reason: 'twice' });
    expect(again.status).toBe(409);
    expect(again.body.errors[0]).toMatchObject({ code: 'INVALID_STATE' });
    expect(again.body.errors[0].message).toContain('already resolved (dismissed)');

    const onMatched = await adminRequest(t, 'POST', `/sms-records/${matched!.id}/dismissals`, { reason: 'no' });
    expect(onMatched.status).toBe(409);
    expect(onMatched.body.errors[0].message).toContain('is matched');

    const unknown = await adminRequest(t, 'POST', `/sms-records/999999999/dismissals`, { reason: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0]).toMatchObject({ code: 'SMS_RECORD_NOT_FOUND' });

    for (const body of [{}, { reason: '   ' }, { reason: 'x'.repeat(501) }, { reason: 'ok', extra: 1 }]) {
      const bad = await adminRequest(t, 'POST', `/sms-records/${matched!.id}/dismissals`, body);
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    expect(await auditCount(t)).toBe(audits);
    expect(await smsRow(t, matched!.id)).toMatchObject({ match_status: 'matched', resolution: null });
    expect(await smsRow(t, open!.id)).toMatchObject({ resolution: 'dismissed', resolution_note: 'test message' });
  });
});

describe('a person accepts an SMS whose amount differs', () => {
  it('the customer sent 495 for a 500 order with the right id: refused by default, accepted with accept_amount_difference and a note, audited with both amounts', async () => {
    const scene = await smsScene(t);
    const trx = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '500.00', status: 'awaiting_verification', gatewayTrxId: trx });
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('495.00', trx) }]);
    expect(sms!.match_status).toBe('low_confidence');
    expect(await waiting(scene.brandId)).toEqual([sms!.id]);
    const audits = await auditCount(t);

    const plain = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, { sms_record_id: sms!.id, note: 'ok' });
    expect(plain.status).toBe(409);
    expect(plain.body.errors[0]).toMatchObject({ code: 'SMS_EVIDENCE_MISMATCH' });

    const noNote = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, { sms_record_id: sms!.id, accept_amount_difference: true });
    expect(noNote.status).toBe(400);
    expect(noNote.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'note' });
    const noSms = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, { note: 'x', accept_amount_difference: true });
    expect(noSms.status).toBe(400);
    expect(noSms.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'sms_record_id' });
    expect(await auditCount(t)).toBe(audits);
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');

    const ok = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, { sms_record_id: sms!.id, accept_amount_difference: true, note: 'shop accepts 5 short' }, { 'x-admin-actor': 'karim' });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ status: 'completed', amount: '500.00', completion_source: 'admin' });
    expect(await smsRow(t, sms!.id)).toMatchObject({ match_status: 'matched', resolution: 'verified', resolution_note: 'shop accepts 5 short' });
    expect(await waiting(scene.brandId)).toEqual([]);
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
    const audit = (await auditRows(t, 'transaction.verify')).at(-1);
    expect(audit!.after).toMatchObject({ status: 'completed', amount: '500.00', sms_record_id: sms!.id, sms_amount_accepted: '495.00', note: 'shop accepts 5 short' });
  });

  it('the flag accepts only the amount: another trx id is still SMS_EVIDENCE_MISMATCH', async () => {
    const scene = await smsScene(t);
    const { transaction } = await seedPayment(t, scene, { amount: '200.00', status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('190.00', newGatewayTrxId()) }]);
    const res = await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, { sms_record_id: sms!.id, accept_amount_difference: true, note: 'x' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ code: 'SMS_EVIDENCE_MISMATCH' });
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
  });
});

describe('the CLI', () => {
  it('sms:list --needs-review shows the queue; sms:dismiss empties it; transaction:verify --accept-amount-difference', async () => {
    const scene = await smsScene(t);
    const trx = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '300.00', status: 'awaiting_verification', gatewayTrxId: trx });
    const [short] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('299.00', trx) }]);
    const [stray] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('12.00', newGatewayTrxId()) }]);

    const list = await runCli(t, ['sms:list', '--brand', String(scene.brandId), '--needs-review', '--json']);
    expect(list.code).toBe(0);
    expect(list.json().data.map((r: { id: number }) => r.id).sort()).toEqual([short!.id, stray!.id].sort());

    const dismissed = await runCli(t, ['sms:dismiss', '--sms-record', String(stray!.id), '--reason', 'a test transfer', '--json']);
    expect(dismissed.code).toBe(0);
    expect(dismissed.json()).toMatchObject({ id: stray!.id, resolution: 'dismissed' });

    const refused = await runCli(t, ['transaction:verify', '--transaction', String(transaction.id), '--sms-record', String(short!.id), '--accept-amount-difference']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('note');
    const verified = await runCli(t, ['transaction:verify', '--transaction', String(transaction.id), '--sms-record', String(short!.id), '--accept-amount-difference', '--note', 'one taka short, accepted', '--json']);
    expect(verified.code).toBe(0);
    expect(verified.json()).toMatchObject({ status: 'completed' });
    expect(await waiting(scene.brandId)).toEqual([]);
  });
});

describe('a transaction’s timeline', () => {
  it('started, the candidate SMS, the person’s verification and the completion, oldest first, without SMS text; 404 for an unknown id', async () => {
    const scene = await smsScene(t);
    const trx = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '500.00', status: 'awaiting_verification', gatewayTrxId: trx });
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('495.00', trx) }]);
    await adminRequest(t, 'POST', `/transactions/${transaction.id}/verifications`, { sms_record_id: sms!.id, accept_amount_difference: true, note: 'accepted' }, { 'x-admin-actor': 'nadia' });

    const res = await adminRequest(t, 'GET', `/transactions/${transaction.id}/timeline`);
    expect(res.status).toBe(200);
    const kinds = res.body.data.map((e: { kind: string }) => e.kind);
    expect(kinds[0]).toBe('created');
    expect(kinds).toEqual(expect.arrayContaining(['sms', 'action', 'completed']));
    const at = res.body.data.map((e: { at: string }) => e.at);
    expect(at).toEqual([...at].sort());
    expect(res.body.data.find((e: { kind: string }) => e.kind === 'sms')).toMatchObject({ status: 'matched', ref: { type: 'sms_record', id: sms!.id } });
    expect(res.body.data.find((e: { kind: string }) => e.kind === 'action')).toMatchObject({ title: `Verified by hand with SMS #${sms!.id}; SMS amount 495.00 accepted`, actor: 'admin:nadia', note: 'accepted' });
    expect(res.body.data.find((e: { kind: string }) => e.kind === 'completed')).toMatchObject({ title: 'Completed by admin' });
    expect(JSON.stringify(res.body.data)).not.toContain('You have received');

    const unknown = await adminRequest(t, 'GET', '/transactions/999999999/timeline');
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0]).toMatchObject({ code: 'TRANSACTION_NOT_FOUND' });
  });
});
