import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiptsSweep } from '../../server/domain/receipts/send-receipt.job.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { requestRefund, seedGateway, seedTransaction, settleRefund } from '../support/seed.ts';
import { startSmtpSink } from '../support/smtp-sink.ts';
import { waitFor } from '../support/wait.ts';
import { adminRequest, auditRows } from './admin-support.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';

/**
 * Receipt e-mails (README, "Receipts"): a customer gets one for each payment
 * and refund that completes after the brand switched receipts on, through the
 * real SMTP client to a real SMTP server.
 */

const SMTP_PASS = 'receipt-smtp-pass-31c9';
let t: TestContext;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
let gateway: GatewayView;

beforeAll(async () => {
  smtp = await startSmtpSink({ user: 'receipts', pass: SMTP_PASS });
  t = await startTestServer({ SMTP_URL: smtp.url, RECEIPT_EMAIL_FROM: 'receipts@pay.example.com' });
  gateway = await seedGateway(t, 'bkash');
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const sweep = () => receiptsSweep.run(t.runtime.deps);
const receiptsOf = (brandId: number) =>
  t.sql<{ id: string; kind: string; mode: string; status: string; attempts: number; last_error: string | null }>(
    'SELECT id, kind, mode, status, attempts, last_error FROM receipts WHERE brand_id = $1 ORDER BY id',
    [brandId],
  );
/** Each mail with its body's quoted-printable soft line breaks undone. */
const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address)).map((m) => ({ ...m, body: m.body.replace(/=\r\n/g, '') }));

async function brandWithReceipts(name: string, opts: { mode?: 'live' | 'test' } = {}) {
  const brand = await t.createBrand(name, opts);
  const res = await adminRequest(t, 'PATCH', `/brands/${brand.brandId}`, { receipts_enabled: true });
  expect(res.status).toBe(200);
  expect(res.body.data.receipts_enabled).toBe(true);
  return brand;
}

describe('receipts', () => {
  it('a completed payment sends its customer one receipt, with the amount, both references and a link; a refund sends its own', async () => {
    const { brandId, apiKey } = await brandWithReceipts('Corner Shop');
    const email = 'rahim@example.com';
    const paid = await seedTransaction(t, { apiKey, gateway, amount: '1250.00', gatewayTrxId: 'BKX7Y8Z9Q1', customer: { name: 'Rahim', email } });
    expect(await sweep()).toEqual({ queued: 1 });
    expect(await sweep()).toEqual({ queued: 0 });
    const [mail] = await waitFor(async () => mailsTo(email), (m) => m.length === 1);
    expect(mail!.subject).toBe('Receipt from Corner Shop: 1,250.00 BDT');
    expect(mail!.from).toBe('receipts@pay.example.com');
    expect(mail!.headers).toMatch(/^From: "?Corner Shop"? <receipts@pay\.example\.com>/m);
    expect(mail!.body).toContain('your payment of 1,250.00 BDT was received');
    expect(mail!.body).toContain(`Transaction: ${paid.transaction.trxId}`);
    expect(mail!.body).toContain('Wallet transaction ID: BKX7Y8Z9Q1');
    expect(mail!.body).toContain('Paid with: bKash');
    expect(mail!.body).toContain(`/checkout/${paid.paymentId}`);
    expect(mail!.body).not.toContain('TEST');
    expect(mail!.raw).not.toContain(SMTP_PASS);
    expect(await waitFor(() => receiptsOf(brandId), (r) => r[0]?.status === 'sent')).toMatchObject([{ kind: 'payment', mode: 'live', status: 'sent', attempts: 1 }]);

    const refund = await requestRefund(t, apiKey, { trx_id: paid.transaction.trxId, amount: '250.00', reason: 'one item back' });
    expect(refund.status).toBe(201);
    await settleRefund(t, refund.body.data.id, 'completed');
    await sweep();
    const mails = await waitFor(async () => mailsTo(email), (m) => m.length === 2);
    expect(mails[1]!.subject).toBe('Refund from Corner Shop: 250.00 BDT');
    expect(mails[1]!.body).toContain('Your refund of 250.00 BDT was completed.');
  });

  it("a test-mode payment's receipt says it is a test", async () => {
    const { apiKey } = await brandWithReceipts('Test Shop', { mode: 'test' });
    const sandbox = await seedGateway(t, 'sandbox');
    await seedTransaction(t, { apiKey, gateway: sandbox, amount: '99.00', customer: { email: 'tester@example.com' } });
    await sweep();
    const [mail] = await waitFor(async () => mailsTo('tester@example.com'), (m) => m.length === 1);
    expect(mail!.subject).toMatch(/^\[TEST\] Receipt from Test Shop: 99\.00/);
    expect(mail!.body).toContain('This is a TEST receipt');
  });

  it('nothing for a brand with receipts off, for what completed before they were switched on, nor for a payment without an e-mail (skipped)', async () => {
    const off = await t.createBrand('No receipts');
    await seedTransaction(t, { apiKey: off.apiKey, gateway, customer: { email: 'off@example.com' } });
    const later = await t.createBrand('Later');
    await seedTransaction(t, { apiKey: later.apiKey, gateway, customer: { email: 'before@example.com' } });
    await adminRequest(t, 'PATCH', `/brands/${later.brandId}`, { receipts_enabled: true });
    const noEmail = await brandWithReceipts('Phone only');
    await seedTransaction(t, { apiKey: noEmail.apiKey, gateway, customer: { phone: '01712345678' } });
    await sweep();
    expect(await receiptsOf(off.brandId)).toEqual([]);
    expect(await receiptsOf(later.brandId)).toEqual([]);
    expect(await waitFor(() => receiptsOf(noEmail.brandId), (r) => r[0]?.status === 'skipped')).toMatchObject([{ status: 'skipped', last_error: 'the payment names no customer e-mail' }]);
    expect(mailsTo('off@example.com')).toEqual([]);
    expect(mailsTo('before@example.com')).toEqual([]);
    // Switching it on again keeps its start; off and on is audited.
    const audit = await auditRows(t, 'brand.update');
    expect(audit.some((a) => a.brand_id === String(later.brandId) && a.after?.receipts_enabled === true)).toBe(true);
  });

  it('an SMTP server refusing the mail leaves the receipt pending with the reply code, retried later; the address is not logged', async () => {
    const { brandId, apiKey } = await brandWithReceipts('Refused Shop');
    smtp.state.reject = true;
    try {
      await seedTransaction(t, { apiKey, gateway, customer: { email: 'refused@example.com' } });
      await sweep();
      const [r] = await waitFor(() => receiptsOf(brandId), (rows) => (rows[0]?.attempts ?? 0) >= 1 && rows[0]!.last_error !== null);
      expect(r).toMatchObject({ status: 'pending', last_error: expect.stringMatching(/451/) });
    } finally {
      smtp.state.reject = false;
    }
    expect(t.logs.join('\n')).not.toContain('refused@example.com');
  });

  it('the switch is a boolean, answered in the envelope', async () => {
    const { brandId } = await t.createBrand('Bad switch');
    const res = await adminRequest(t, 'PATCH', `/brands/${brandId}`, { receipts_enabled: 'yes' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'receipts_enabled' });
  });
});
