import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { eventsOf, forwardSms, seedPayment, smsBodies, smsRow, smsScene, transactionRow } from '../support/sms-matching.ts';
import { adminRequest, auditCount, auditRows, runCli } from './admin-support.ts';

/**
 * A person verifies a payment whose customer mistyped the wallet's trx id, with
 * the SMS carrying the real one: `correct_trx_id` and a note, allowed only
 * within the typo distance of the review suggestions (docs/matching.md, "The
 * review queue and its decisions"). Every refusal changes nothing.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

let n = 0;
/** A fresh 10-character id and a claim one substitution away from it (`8AB3CD4EF5` vs `8AB3CD4EF6`-like). */
function ids(): { real: string; typo: string; far: string } {
  const body = `${Date.now().toString(36).toUpperCase()}${(++n).toString(36).toUpperCase()}`.slice(-8).padStart(8, 'Q');
  const real = `K${body}7`;
  return { real, typo: `K${body}1`, far: `K${body.slice(0, 5)}ZZZ1` };
}

async function scenario(opts: { claimed: 'typo' | 'far'; smsAmount?: string; payment?: { amount: string } } = { claimed: 'typo' }) {
  const scene = await smsScene(t);
  const id = ids();
  const { transaction } = await seedPayment(t, scene, { amount: opts.payment?.amount ?? '750.00', status: 'awaiting_verification', gatewayTrxId: id[opts.claimed] });
  const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(opts.smsAmount ?? '750.00', id.real) }]);
  return { scene, id, transaction, sms: sms! };
}

const verify = (txId: number, body: Record<string, unknown>, actor = 'rahim') => adminRequest(t, 'POST', `/transactions/${txId}/verifications`, body, { 'x-admin-actor': actor });

async function unchanged(txId: number, smsId: number, claimed: string, audits: number): Promise<void> {
  expect(await transactionRow(t, txId)).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: claimed });
  expect((await smsRow(t, smsId)).resolution).toBeNull();
  expect(await eventsOf(t, txId)).toEqual([]);
  expect(await auditCount(t)).toBe(audits);
}

describe('verify with a typo correction', () => {
  it('the SMS pairs with the payment as a 1-edit suggestion; with correct_trx_id and a note the payment completes with the SMS’s id; audit row and timeline keep both ids and the note', async () => {
    const { id, transaction, sms } = await scenario();
    const row = await smsRow(t, sms.id);
    expect(row.match_status).toBe('low_confidence');
    expect(row.suggestions[0]).toMatchObject({ transaction_id: transaction.id, distance: 1 });

    const res = await verify(transaction.id, { sms_record_id: sms.id, correct_trx_id: true, note: 'customer typed 1 for 7, checked the wallet' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'completed', completion_source: 'admin', gateway_trx_id: id.real });
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
    expect(await smsRow(t, sms.id)).toMatchObject({
      match_status: 'matched',
      transaction_id: String(transaction.id),
      resolution: 'verified',
      resolved_by: 'admin:rahim',
      resolution_note: 'customer typed 1 for 7, checked the wallet',
    });

    const [audit] = (await auditRows(t, 'transaction.verify')).filter((r) => r.target_id === String(transaction.id));
    expect(audit!.before).toEqual({ status: 'awaiting_verification', amount: '750.00', currency: 'BDT', gateway_trx_id: id.typo });
    expect(audit!.after).toEqual({
      status: 'completed',
      amount: '750.00',
      currency: 'BDT',
      gateway_trx_id: id.real,
      sms_record_id: sms.id,
      claimed_gateway_trx_id: id.typo,
      note: 'customer typed 1 for 7, checked the wallet',
    });

    const timeline = await adminRequest(t, 'GET', `/transactions/${transaction.id}/timeline`);
    expect(timeline.status).toBe(200);
    const action = timeline.body.data.find((e: { kind: string }) => e.kind === 'action');
    expect(action).toMatchObject({
      title: `Verified by hand with SMS #${sms.id}; claimed trx id ${id.typo} corrected to ${id.real}`,
      actor: 'admin:rahim',
      note: 'customer typed 1 for 7, checked the wallet',
      ref: { type: 'audit_entry', id: Number(audit!.id) },
    });
    expect(timeline.body.data.find((e: { kind: string }) => e.kind === 'sms')).toMatchObject({ status: 'matched', note: 'customer typed 1 for 7, checked the wallet' });

    // The id is the SMS's now: the payment is found by it, and the mistyped one is free.
    const found = await adminRequest(t, 'GET', `/transactions?trx_id=${id.real}`);
    expect(found.body.data.map((x: { id: number }) => x.id)).toEqual([transaction.id]);
    expect((await adminRequest(t, 'GET', `/transactions?trx_id=${id.typo}`)).body.data).toEqual([]);
  });

  it('refused without the flag (SMS_EVIDENCE_MISMATCH), and the flag without a note or without the SMS (400): nothing changes', async () => {
    const { id, transaction, sms } = await scenario();
    const audits = await auditCount(t);
    const noFlag = await verify(transaction.id, { sms_record_id: sms.id, note: 'typo' });
    expect(noFlag.status).toBe(409);
    expect(noFlag.body.errors[0]).toMatchObject({ code: 'SMS_EVIDENCE_MISMATCH', field: 'sms_record_id' });
    const noNote = await verify(transaction.id, { sms_record_id: sms.id, correct_trx_id: true });
    expect(noNote.status).toBe(400);
    expect(noNote.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'note' });
    const noSms = await verify(transaction.id, { correct_trx_id: true, note: 'typo' });
    expect(noSms.status).toBe(400);
    expect(noSms.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'sms_record_id' });
    await unchanged(transaction.id, sms.id, id.typo, audits);
  });

  it('an SMS id further than a typo from the claim is refused even with the flag', async () => {
    const { id, transaction, sms } = await scenario({ claimed: 'far' });
    const audits = await auditCount(t);
    const res = await verify(transaction.id, { sms_record_id: sms.id, correct_trx_id: true, note: 'looks close enough' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ code: 'SMS_EVIDENCE_MISMATCH', field: 'sms_record_id' });
    expect(res.body.errors[0].message).toContain('more than a typo');
    await unchanged(transaction.id, sms.id, id.far, audits);
  });

  it('another amount is refused unless the person also accepts the difference; with both flags and a note it completes, audited with both ids and both amounts', async () => {
    const { id, transaction, sms } = await scenario({ claimed: 'typo', smsAmount: '745.00' });
    const audits = await auditCount(t);
    const res = await verify(transaction.id, { sms_record_id: sms.id, correct_trx_id: true, note: 'typo' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ code: 'SMS_EVIDENCE_MISMATCH' });
    expect(res.body.errors[0].message).toContain('amount');
    await unchanged(transaction.id, sms.id, id.typo, audits);

    const both = await verify(transaction.id, { sms_record_id: sms.id, correct_trx_id: true, accept_amount_difference: true, note: 'typo and 5 short, shop accepts' });
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    expect(both.body.data).toMatchObject({ status: 'completed', amount: '750.00', gateway_trx_id: id.real });
    const [audit] = (await auditRows(t, 'transaction.verify')).filter((r) => r.target_id === String(transaction.id));
    expect(audit!.after).toMatchObject({ gateway_trx_id: id.real, claimed_gateway_trx_id: id.typo, sms_amount_accepted: '745.00', note: 'typo and 5 short, shop accepts' });
  });

  it('an SMS that already matched a payment cannot correct another claim: INVALID_STATE', async () => {
    const { scene, id, transaction, sms } = await scenario();
    // The genuine owner claims the SMS's id and is verified with it first.
    const owner = await seedPayment(t, scene, { amount: '750.00', status: 'awaiting_verification', gatewayTrxId: null });
    const first = await verify(owner.transaction.id, { sms_record_id: sms.id });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const audits = await auditCount(t);
    const res = await verify(transaction.id, { sms_record_id: sms.id, correct_trx_id: true, note: 'typo' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ code: 'INVALID_STATE', field: 'sms_record_id' });
    expect(await transactionRow(t, transaction.id)).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: id.typo });
    expect(await auditCount(t)).toBe(audits);
  });

  it('an SMS forwarded by a test-mode phone never corrects a live payment’s claim', async () => {
    const scene = await smsScene(t);
    const testPhone = await pairDevice(t, { brandId: scene.brandId, mode: 'test' });
    const id = ids();
    const { transaction } = await seedPayment(t, scene, { amount: '750.00', status: 'awaiting_verification', gatewayTrxId: id.typo });
    const [sms] = await forwardSms(t, testPhone, [{ sender: 'bKash', body: smsBodies.bkash('750.00', id.real) }]);
    const audits = await auditCount(t);
    const res = await verify(transaction.id, { sms_record_id: sms!.id, correct_trx_id: true, note: 'typo' });
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ code: 'SMS_EVIDENCE_MISMATCH' });
    expect(res.body.errors[0].message).toContain('test-mode');
    await unchanged(transaction.id, sms!.id, id.typo, audits);
  });

  it('nothing to correct (the claim is already the SMS’s id, or there is no claim): 400 on correct_trx_id', async () => {
    const scene = await smsScene(t);
    const id = ids();
    const { transaction } = await seedPayment(t, scene, { amount: '750.00', status: 'awaiting_verification', gatewayTrxId: id.real });
    const [sms] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('751.00', id.real) }]);
    const res = await verify(transaction.id, { sms_record_id: sms!.id, correct_trx_id: true, accept_amount_difference: true, note: 'typo' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'correct_trx_id' });
    expect(await transactionRow(t, transaction.id)).toMatchObject({ status: 'awaiting_verification', gateway_trx_id: id.real });

    const unclaimed = await seedPayment(t, scene, { amount: '751.00', status: 'pending', gatewayTrxId: null });
    const none = await verify(unclaimed.transaction.id, { sms_record_id: sms!.id, correct_trx_id: true, note: 'typo' });
    expect(none.status).toBe(400);
    expect(none.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'correct_trx_id' });
    expect(await transactionRow(t, unclaimed.transaction.id)).toMatchObject({ status: 'pending', gateway_trx_id: null });
  });

  it('the CLI: transaction:verify --correct-trx-id needs --note; with it the claim is corrected', async () => {
    const { id, transaction, sms } = await scenario();
    const refused = await runCli(t, ['transaction:verify', '--transaction', String(transaction.id), '--sms-record', String(sms.id), '--correct-trx-id']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('note');
    const ok = await runCli(t, ['transaction:verify', '--transaction', String(transaction.id), '--sms-record', String(sms.id), '--correct-trx-id', '--note', 'typo in the last character', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ status: 'completed', gateway_trx_id: id.real });
  });

  it('the payment detail shows the payer number the customer declared, masked to its last three digits', async () => {
    const scene = await smsScene(t);
    const { transaction } = await seedPayment(t, scene, { amount: '750.00', status: 'awaiting_verification', senderNumber: '01712345987' });
    const res = await adminRequest(t, 'GET', `/transactions/${transaction.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.sender_number).toMatch(/^\+?\*+987$/);
    expect(JSON.stringify(res.body.data)).not.toContain('1712345');
  });
});
