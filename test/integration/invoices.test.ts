import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaycollectMerchant, type Invoice } from '../../clients/merchant/index.ts';
import { constructEvent } from '../../clients/shared/webhook-verify.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { invoiceOverdueSweep } from '../../server/domain/invoices/mark-overdue.job.ts';
import { completeTransaction, startTransaction } from '../../server/domain/payments/transactions.ts';
import { formatDayIn } from '../../server/domain/display.ts';
import { pdfText } from '../support/pdf-text.ts';
import { countStatements } from '../support/statements.ts';
import { seedGateway } from '../support/seed.ts';
import { startSmtpSink } from '../support/smtp-sink.ts';
import { startReceiver, verifyingResponder, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually, waitFor } from '../support/wait.ts';
import { startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';
import { adminRequest, auditRows, runCli } from './admin-support.ts';
import { consoleRequest, newOperator, session } from './console-support.ts';

/**
 * Invoices (README, "Invoices") through the merchant SDK against the real app:
 * totals, numbering under concurrency, states, the hosted page paying through
 * the normal checkout and the one completion path, webhooks to a real
 * receiver, e-mail to a real SMTP server, the PDF, and brand/mode isolation.
 */

let server: WebhookTestServer;
let t: TestContext;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
let receiver: WebhookReceiver;
let secret: string;
let brandId: number;
let liveKey: string;
let testKey: string;
let live: PaycollectMerchant;
let gateway: GatewayView;

const future = () => new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  smtp = await startSmtpSink({ user: 'invoices', pass: 'invoice-smtp-pass-7f1e' });
  server = await startWebhookTestServer(undefined, { SMTP_URL: smtp.url, RECEIPT_EMAIL_FROM: 'billing@pay.example.com' });
  t = server.t;
  receiver = await startReceiver();
  ({ brandId, apiKey: liveKey } = await t.createBrand('Dhaka Traders'));
  testKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'test', mode: 'test' })).key;
  gateway = await seedGateway(t, 'bkash');
  await seedGateway(t, 'sandbox');
  const put = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: liveKey, body: { url: receiver.url, events: ['invoice.created', 'invoice.paid', 'invoice.overdue', 'invoice.voided', 'payment.completed'] } });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  secret = put.body.data.secret;
  receiver.respond = verifyingResponder(() => secret);
  live = new PaycollectMerchant({ apiKey: liveKey, baseUrl: t.baseUrl });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await smtp?.close();
});

const path = (url: string) => new URL(url).pathname;
const form = (url: string, body: Record<string, string> = {}) =>
  fetch(`${t.baseUrl}${path(url)}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString() });

/** Pays a payment the way a verified wallet payment completes: a transaction started at the checkout, completed by the one completion path. */
async function completePayment(paymentId: string): Promise<void> {
  const db = t.runtime.deps.db;
  const started = await startTransaction(db, t.runtime.deps.crypto, { paymentId, gatewayCode: gateway.code, gatewayTrxId: `TX${Math.random().toString(36).slice(2, 12).toUpperCase()}` });
  await completeTransaction(db, started.id, { source: 'admin' });
}

const eventsOf = (invoiceId: string) =>
  receiver.requests.filter((r) => r.status === 200).map((r) => constructEvent(r.rawBody, r.headers as Record<string, string>, secret)).filter((e) => (e.data as { invoice_id?: string }).invoice_id === invoiceId);

/** The first invoice, followed through its life by the tests in order. */
let invoice: Invoice;

describe('invoices', () => {

  it('creates a draft with exact totals and the next number; a draft is not public; update recomputes; finalize opens it', async () => {
    invoice = await live.invoices.create({
      customer: { name: 'রহিম উদ্দিন', email: 'rahim@example.com' },
      currency: 'BDT',
      due_date: future(),
      memo: 'ধন্যবাদ! Thank you for your business.',
      lines: [
        { description: 'চাল (Rice) 25 kg', quantity: '3', unit_price: '1333.33' },
        { description: 'Delivery', quantity: '0.5', unit_price: '0.05' },
      ],
      discount: { amount: '100.00' },
      tax: { description: 'VAT', rate: '7.5' },
    });
    // 3 × 1333.33 = 3999.99; 0.5 × 0.05 = 0.025 → 0.03 (half-up); subtotal 4000.02; taxable 3900.02; 7.5 % = 292.5015 → 292.50.
    expect(invoice).toMatchObject({
      number: 'INV-0001', status: 'draft', currency: 'BDT', subtotal: '4000.02', total: '4192.52', amount_paid: '0.00', amount_remaining: '4192.52',
      customer_name: 'রহিম উদ্দিন', livemode: true,
      lines: [{ amount: '3999.99' }, { quantity: '0.5', amount: '0.03' }],
      discount: { description: 'Discount', rate: null, amount: '100.00' },
      tax: { description: 'VAT', rate: '7.5', amount: '292.50' },
    });
    expect(invoice.hosted_url).toMatch(/\/invoices\/inv_[A-Za-z0-9_-]{22}$/);
    expect((await fetch(`${t.baseUrl}${path(invoice.hosted_url)}`)).status).toBe(404);

    invoice = await live.invoices.update(invoice.id, { tax: null, memo: null });
    expect(invoice).toMatchObject({ total: '3900.02', tax: null, memo: null, status: 'draft' });
    invoice = await live.invoices.update(invoice.id, { tax: { rate: '7.5', description: 'VAT' } });
    expect(invoice.total).toBe('4192.52');

    invoice = await live.invoices.finalize(invoice.id);
    expect(invoice.status).toBe('open');
    expect(invoice.finalized_at).not.toBeNull();
    await expect(live.invoices.update(invoice.id, { memo: 'late' })).rejects.toMatchObject({ status: 409, code: 'INVOICE_NOT_DRAFT' });
    await expect(live.invoices.finalize(invoice.id)).rejects.toMatchObject({ status: 409, code: 'INVOICE_NOT_DRAFT' });
  });

  it('the hosted page shows it; its PDF is a valid PDF with the number and totals, Bangla fonts embedded', async () => {
    const res = await fetch(`${t.baseUrl}${path(invoice.hosted_url)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const page = await res.text();
    for (const s of ['INV-0001', 'Dhaka Traders', 'রহিম উদ্দিন', '4,192.52', '3,999.99', 'Pay 4,192.52\u00a0BDT now', 'Download PDF']) expect(page).toContain(s);
    const bn = await (await fetch(`${t.baseUrl}${path(invoice.hosted_url)}?lang=bn`)).text();
    expect(bn).toContain('lang="bn"');
    expect(bn).toContain('সর্বমোট');
    // In Bangla: amounts, quantities and the due day in Bangla digits (the line of 0.5 × 0.05), nothing of them left in Latin digits.
    for (const s of ['৪,১৯২.৫২', '>০.৫<', '>৩<', formatDayIn('bn', invoice.due_date)]) expect(bn).toContain(s);
    expect(bn).not.toContain(`>${invoice.due_date}<`);
    expect(page).toContain(`>${invoice.due_date}<`);
    // The tax rate and the part payment's currency too: Bangla digits and ৳ in Bangla, as before in English.
    expect(bn).toContain('VAT (৭.৫%)');
    expect(bn).not.toContain('7.5%');
    expect(bn).toContain('এখন কত পরিশোধ করবেন (৳)');
    expect(page).toContain('VAT (7.5%)');
    expect(page).toContain('Amount to pay now (BDT)');

    const pdfRes = await fetch(`${t.baseUrl}${path(invoice.pdf_url)}`);
    expect(pdfRes.status).toBe(200);
    expect(pdfRes.headers.get('content-type')).toBe('application/pdf');
    expect(pdfRes.headers.get('content-disposition')).toBe('attachment; filename="INV-0001.pdf"');
    const pdf = Buffer.from(await pdfRes.arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.subarray(-6).toString()).toMatch(/%%EOF\s*$/);
    const raw = pdf.toString('latin1');
    expect(raw).toMatch(/\/FontFile2|\/FontFile3|\/FontFile/);
    // Two embedded font subsets of Noto Sans Bengali: the Latin one and the Bengali one (the customer's name and lines).
    expect((raw.match(/\/BaseFont \/[A-Z]{6}\+NotoSansBengali/g) ?? []).length).toBeGreaterThanOrEqual(2);
    const text = pdfText(pdf);
    for (const s of ['INV-0001', 'Dhaka Traders', 'Subtotal', '4,000.02 BDT', 'VAT (7.5%)', '292.50 BDT', '-100.00 BDT', 'Total', '4,192.52 BDT', '3,999.99', 'Rice', 'চাল']) expect(text, text).toContain(s);
    const bnPdf = pdfText(Buffer.from(await (await fetch(`${t.baseUrl}${path(invoice.pdf_url)}?lang=bn`)).arrayBuffer()));
    // The text read back keeps each script's run apart (and shaped Bengali in glyph order), so it is compared without white space.
    const compact = bnPdf.replace(/\s+/g, '');
    for (const s of ['৪,১৯২.৫২৳', '(৭.৫%)', '-১০০.০০৳']) expect(compact, bnPdf).toContain(s);
    expect(compact).not.toContain(invoice.due_date);
    expect(compact).not.toContain('4,192.52');
  });

  it('pays in parts through the normal checkout: the completion adds to amount paid, and the last part makes it paid with invoice.paid', async () => {
    const part = await form(invoice.hosted_url, { amount: '1,000.50' });
    expect(part.status).toBe(303);
    const firstPayment = part.headers.get('location')!.split('/').pop()!;
    expect(part.headers.get('location')).toBe(`/checkout/${firstPayment}`);
    // A second click on the same amount continues the same payment.
    expect((await form(invoice.hosted_url, { amount: '1000.50' })).headers.get('location')).toBe(`/checkout/${firstPayment}`);
    // Typed in Bangla digits on the Bangla page, the same amount.
    expect((await form(invoice.hosted_url, { amount: '১,০০০.৫০' })).headers.get('location')).toBe(`/checkout/${firstPayment}`);
    const tooMuch = await form(invoice.hosted_url, { amount: '5000' });
    expect(tooMuch.status).toBe(400);
    expect(await tooMuch.text()).toContain('Enter at most 4192.52 BDT');
    // The Bangla page says the limit in Bangla digits with the taka sign.
    const tooMuchBn = await fetch(`${t.baseUrl}${path(invoice.hosted_url)}?lang=bn`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'amount=5000' });
    expect(tooMuchBn.status).toBe(400);
    const tooMuchBnPage = await tooMuchBn.text();
    expect(tooMuchBnPage).toContain('সর্বোচ্চ ৪,১৯২.৫২ ৳ লিখুন');
    expect(tooMuchBnPage).not.toContain('4192.52');

    await completePayment(firstPayment);
    invoice = await live.invoices.retrieve(invoice.id);
    expect(invoice).toMatchObject({ status: 'open', amount_paid: '1000.50', amount_remaining: '3192.02' });
    const payment = await live.payments.retrieve(firstPayment);
    expect(payment).toMatchObject({ reference: 'INV-0001' });

    const rest = await form(invoice.hosted_url);
    const secondPayment = rest.headers.get('location')!.split('/').pop()!;
    expect(await t.sql('SELECT amount, currency FROM payment_intents WHERE uuid = $1', [secondPayment])).toEqual([{ amount: '3192.02', currency: 'BDT' }]);
    await completePayment(secondPayment);
    invoice = await live.invoices.retrieve(invoice.id);
    expect(invoice).toMatchObject({ status: 'paid', amount_paid: '4192.52', amount_remaining: '0.00' });
    expect(invoice.paid_at).not.toBeNull();
    const { payments } = await live.invoices.retrieve(invoice.id);
    expect(payments.map((p) => [p.payment_id, p.status])).toEqual([[secondPayment, 'completed'], [firstPayment, 'completed']]);

    const events = await eventually(async () => {
      const e = eventsOf(invoice.id);
      return e.some((x) => x.event === 'invoice.paid') ? e : null;
    });
    expect(events.filter((e) => e.event === 'invoice.paid')).toHaveLength(1);
    expect(events.find((e) => e.event === 'invoice.paid')!.data).toMatchObject({ number: 'INV-0001', status: 'paid', amount_paid: '4192.52', payment_id: secondPayment });
    expect(events.some((e) => e.event === 'invoice.created')).toBe(true);

    // Paid: the page says so and offers no Pay; a Pay is refused; voiding is refused.
    const page = await (await fetch(`${t.baseUrl}${path(invoice.hosted_url)}`)).text();
    expect(page).toContain('This invoice is paid in full');
    expect(page).not.toContain('id="invoice-pay"');
    const again = await form(invoice.hosted_url);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('This invoice is already paid');
    await expect(live.invoices.void(invoice.id)).rejects.toMatchObject({ status: 409, code: 'INVOICE_ALREADY_PAID' });
  });

  it('a completion reads no invoice when its payment pays none; one that pays an invoice settles it in the same transaction', async () => {
    const plain = await live.payments.create({ amount: '75.00', currency: 'BDT', reference: 'no-invoice' });
    const quiet = await countStatements(() => completePayment(plain.payment_id));
    expect(quiet.texts.filter((q) => /invoice/i.test(q))).toEqual([]);

    const draft = await live.invoices.create({ customer: { email: 'settle@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'Settle', quantity: '1', unit_price: '40.00' }], status: 'open' });
    const paying = (await form(draft.hosted_url)).headers.get('location')!.split('/').pop()!;
    const settled = await countStatements(() => completePayment(paying));
    expect(settled.texts.filter((q) => /invoice/i.test(q)).length).toBeGreaterThan(0);
    expect(await live.invoices.retrieve(draft.id)).toMatchObject({ status: 'paid', amount_paid: '40.00' });
  });

  it('a void invoice cannot be paid (the page says why, nothing is created); voiding twice sends invoice.voided once', async () => {
    const inv = await live.invoices.create({ customer: { phone: '01712345678' }, currency: 'BDT', due_date: future(), lines: [{ description: 'Service', quantity: '1', unit_price: '500.00' }], status: 'open' });
    expect(inv.status).toBe('open');
    const voided = await live.invoices.void(inv.id);
    expect(voided.status).toBe('void');
    expect((await live.invoices.void(inv.id)).voided_at).toBe(voided.voided_at);
    const before = await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents');
    const pay = await form(inv.hosted_url);
    expect(pay.status).toBe(409);
    expect(await pay.text()).toContain('This invoice is void and cannot be paid or changed');
    expect(await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents')).toEqual(before);
    const stored = await t.sql<{ event: string }>(`SELECT event FROM webhook_events WHERE event LIKE 'invoice.%' AND payload::jsonb -> 'data' ->> 'invoice_id' = $1`, [inv.id]);
    expect(stored.map((e) => e.event).sort()).toEqual(['invoice.created', 'invoice.voided']);
    await expect(live.invoices.send(inv.id)).rejects.toMatchObject({ status: 409, code: 'INVOICE_VOID' });
  });

  it('numbers are gap-free per brand and mode under concurrency; test and live count apart', async () => {
    const { apiKey } = await t.createBrand('Busy Shop');
    const client = new PaycollectMerchant({ apiKey, baseUrl: t.baseUrl });
    const body = { customer: { email: 'many@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '10.00' }] };
    const made = await Promise.all(Array.from({ length: 12 }, () => client.invoices.create(body)));
    expect(made.map((i) => i.number).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `INV-${String(i + 1).padStart(4, '0')}`));
    // A refused create gives no number away.
    await expect(client.invoices.create({ ...body, currency: 'XYZ' })).rejects.toMatchObject({ status: 422, code: 'CURRENCY_NOT_SUPPORTED' });
    expect((await client.invoices.create(body)).number).toBe('INV-0013');
    const testInvoice = await new PaycollectMerchant({ apiKey: testKey, baseUrl: t.baseUrl }).invoices.create(body);
    expect(testInvoice).toMatchObject({ number: 'INV-0001', livemode: false });
  });

  it("isolation: another brand's invoice and the other mode's are not found; a read-only key cannot write", async () => {
    const other = await t.createBrand('Other Shop');
    const otherClient = new PaycollectMerchant({ apiKey: other.apiKey, baseUrl: t.baseUrl });
    await expect(otherClient.invoices.retrieve(invoice.id)).rejects.toMatchObject({ status: 404, code: 'INVOICE_NOT_FOUND' });
    await expect(otherClient.invoices.void(invoice.id)).rejects.toMatchObject({ status: 404, code: 'INVOICE_NOT_FOUND' });
    const testClient = new PaycollectMerchant({ apiKey: testKey, baseUrl: t.baseUrl });
    await expect(testClient.invoices.retrieve(invoice.id)).rejects.toMatchObject({ status: 404, code: 'INVOICE_NOT_FOUND' });
    expect((await testClient.invoices.list()).data.every((i) => !i.livemode)).toBe(true);
    const readKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'ro', scopes: ['read'] })).key;
    const ro = new PaycollectMerchant({ apiKey: readKey, baseUrl: t.baseUrl });
    expect((await ro.invoices.retrieve(invoice.id)).id).toBe(invoice.id);
    await expect(ro.invoices.create({ customer: { email: 'a@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '1.00' }] })).rejects.toMatchObject({
      status: 403,
      code: 'INSUFFICIENT_SCOPE',
    });
    // Filters: status and customer.
    const paidList = await live.invoices.list({ status: 'paid' });
    expect(paidList.data.map((i) => i.id)).toContain(invoice.id);
    expect((await live.invoices.list({ customer_id: invoice.customer_id })).data.map((i) => i.id)).toEqual([invoice.id]);
  });

  it('refuses bad input with the error envelope and writes nothing', async () => {
    const count = async () => (await t.sql<{ n: string }>('SELECT count(*) AS n FROM invoices'))[0]!.n;
    const before = await count();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ customer: { email: 'a@example.com' }, currency: 'BDT', due_date: future(), lines: [] }, 'lines'],
      [{ customer: { email: 'a@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '1.5' }] }, 'lines.0.unit_price'],
      [{ customer: { email: 'a@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '0', unit_price: '1.00' }] }, 'lines.0.quantity'],
      [{ customer: { email: 'a@example.com' }, currency: 'BDT', due_date: '2026-02-30', lines: [{ description: 'x', quantity: '1', unit_price: '1.00' }] }, 'due_date'],
      [{ customer: { email: 'a@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '10.00' }], discount: { amount: '10.01' } }, 'discount.amount'],
      [{ currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '10.00' }] }, 'customer_id'],
      [{ customer_id: '00000000-0000-4000-8000-000000000000', currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '10.00' }] }, 'customer_id'],
      [{ customer: { email: 'not-an-email' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '10.00' }] }, 'customer.email'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', '/api/v1/invoices', { token: liveKey, body });
      expect([400, 404], JSON.stringify(res.body)).toContain(res.status);
      expect(res.body.success).toBe(false);
      expect(JSON.stringify(res.body.errors ?? res.body.error), field).toContain(field);
    }
    expect(await count()).toBe(before);
    expect((await t.request('GET', '/api/v1/invoices/not-a-uuid', { token: liveKey })).body.errors[0].code).toBe('INVOICE_NOT_FOUND');
    expect((await fetch(`${t.baseUrl}/invoices/inv_doesnotexist`)).status).toBe(404);
  });

  it('the overdue sweep moves an open invoice past due once and sends invoice.overdue once; it stays payable', async () => {
    const inv = await live.invoices.create({ customer: { email: 'late@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'Rent', quantity: '1', unit_price: '800.00' }], status: 'open' });
    await t.sql(`UPDATE invoices SET due_date = current_date - 3 WHERE uuid = $1`, [inv.id]);
    await invoiceOverdueSweep.run(t.runtime.deps);
    await invoiceOverdueSweep.run(t.runtime.deps);
    expect((await live.invoices.retrieve(inv.id)).status).toBe('overdue');
    const stored = await t.sql<{ n: string }>(`SELECT count(*) AS n FROM webhook_events WHERE event = 'invoice.overdue' AND payload::jsonb -> 'data' ->> 'invoice_id' = $1`, [inv.id]);
    expect(stored[0]!.n).toBe('1');
    await eventually(async () => eventsOf(inv.id).some((e) => e.event === 'invoice.overdue'));
    const page = await (await fetch(`${t.baseUrl}${path(inv.hosted_url)}`)).text();
    expect(page).toContain('Overdue');
    const pay = await form(inv.hosted_url);
    expect(pay.status).toBe(303);
    await completePayment(pay.headers.get('location')!.split('/').pop()!);
    expect((await live.invoices.retrieve(inv.id)).status).toBe('paid');
  });

  it('send e-mails the customer the hosted link through the real SMTP server; a test-mode invoice says it is a test; no e-mail is a 400', async () => {
    const inv = await live.invoices.create({ customer: { name: 'Karim', email: 'karim@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'Design work', quantity: '2', unit_price: '1500.00' }] });
    const sent = await live.invoices.send(inv.id);
    expect(sent.status).toBe('open');
    expect(sent.last_sent_at).not.toBeNull();
    const [mail] = await waitFor(async () => smtp.mails.filter((m) => m.to.includes('karim@example.com')), (m) => m.length === 1);
    const body = mail!.body.replace(/=\r\n/g, '');
    expect(mail!.subject).toBe(`Invoice INV-${sent.number.slice(4)} from Dhaka Traders: 3,000.00 BDT due ${sent.due_date}`);
    expect(body).toContain(sent.hosted_url);
    expect(body).not.toContain('TEST');

    const testClient = new PaycollectMerchant({ apiKey: testKey, baseUrl: t.baseUrl });
    const testInv = await testClient.invoices.create({ customer: { email: 'tester@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '99.00' }] });
    await testClient.invoices.send(testInv.id);
    const [testMail] = await waitFor(async () => smtp.mails.filter((m) => m.to.includes('tester@example.com')), (m) => m.length === 1);
    expect(testMail!.subject).toMatch(/^\[TEST\] Invoice INV-\d{4} from Dhaka Traders/);
    expect(testMail!.body.replace(/=\r\n/g, '')).toContain('This is a TEST invoice');

    // In Bangla: the amount in Bangla digits with the taka sign, the due day in Bangla.
    const bnInv = await live.invoices.create({ customer: { email: 'bangla@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '1200.00' }] });
    await live.invoices.send(bnInv.id, { language: 'bn' });
    const [bnMail] = await waitFor(async () => smtp.mails.filter((m) => m.to.includes('bangla@example.com')), (m) => m.length === 1);
    const bnText = /Content-Transfer-Encoding: base64/i.test(bnMail!.headers) ? Buffer.from(bnMail!.body.replace(/\s+/g, ''), 'base64').toString('utf8') : bnMail!.body;
    expect(bnMail!.subject).toBe(`Dhaka Traders থেকে চালান INV-${bnInv.number.slice(4)}: ১,২০০.০০ ৳, শেষ তারিখ ${formatDayIn('bn', bnInv.due_date)}`);
    expect(bnText).toContain(`১,২০০.০০ ৳ এর চালান`);
    expect(bnText).toContain(`শেষ তারিখ ${formatDayIn('bn', bnInv.due_date)}`);
    expect(bnText).not.toContain('1,200.00');

    const phoneOnly = await live.invoices.create({ customer: { phone: '01812345678' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '5.00' }] });
    await expect(live.invoices.send(phoneOnly.id)).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    // Refused: the draft was not finalized either.
    expect((await live.invoices.retrieve(phoneOnly.id)).status).toBe('draft');
  });
});

describe('invoices in the console (admin API)', () => {
  it('lists and shows with payments across brands; a scoped operator sees only its brands; void and resend are audited', async () => {
    const other = await t.createBrand('Console Other');
    const otherClient = new PaycollectMerchant({ apiKey: other.apiKey, baseUrl: t.baseUrl });
    const theirs = await otherClient.invoices.create({ customer: { email: 'c1@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'x', quantity: '1', unit_price: '20.00' }], status: 'open' });
    const mine = await live.invoices.create({ customer: { email: 'c2@example.com' }, currency: 'BDT', due_date: future(), lines: [{ description: 'y', quantity: '1', unit_price: '30.00' }], status: 'open' });

    const all = await adminRequest(t, 'GET', `/invoices?per_page=100`);
    expect(all.status).toBe(200);
    const ids = all.body.data.map((i: { id: string }) => i.id);
    expect(ids).toEqual(expect.arrayContaining([theirs.id, mine.id]));
    const filtered = await adminRequest(t, 'GET', `/invoices?brand_id=${brandId}&status=open&mode=live`);
    expect(filtered.body.data.every((i: { brand_id: number; status: string }) => i.brand_id === brandId && i.status === 'open')).toBe(true);
    const one = await adminRequest(t, 'GET', `/invoices/${invoice.id}`);
    expect(one.body.data).toMatchObject({ id: invoice.id, brand_name: 'Dhaka Traders', mode: 'live', status: 'paid' });
    expect(one.body.data.payments).toHaveLength(2);

    const scoped = await session(t, (await newOperator(t, 'operator', { brandIds: [brandId] })).email);
    const seen = await consoleRequest(t, scoped, 'GET', '/invoices?per_page=100');
    expect(new Set(seen.body.data.map((i: { brand_id: number }) => i.brand_id))).toEqual(new Set([brandId]));
    expect((await consoleRequest(t, scoped, 'GET', `/invoices/${theirs.id}`)).status).toBe(404);
    expect((await consoleRequest(t, scoped, 'POST', `/invoices/${theirs.id}/void`, {})).status).toBe(404);
    expect((await otherClient.invoices.retrieve(theirs.id)).status).toBe('open');

    const resent = await consoleRequest(t, scoped, 'POST', `/invoices/${mine.id}/resend`, {});
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    await waitFor(async () => smtp.mails.filter((m) => m.to.includes('c2@example.com')), (m) => m.length === 1);
    const voided = await consoleRequest(t, scoped, 'POST', `/invoices/${mine.id}/void`, {});
    expect(voided.body.data.status).toBe('void');
    const paidVoid = await consoleRequest(t, scoped, 'POST', `/invoices/${invoice.id}/void`, {});
    expect([paidVoid.status, paidVoid.body.errors[0].code]).toEqual([409, 'INVOICE_ALREADY_PAID']);
    const audit = await auditRows(t);
    expect(audit.filter((a) => a.target_id === mine.id).map((a) => a.action).sort()).toEqual(['invoice.resend', 'invoice.void']);

    const viewer = await session(t, (await newOperator(t, 'viewer')).email);
    expect((await consoleRequest(t, viewer, 'POST', `/invoices/${theirs.id}/void`, {})).status).toBe(403);
  });

  it('the CLI lists invoices (filters) and voids one, or reports the error', async () => {
    const list = await runCli(t, ['invoices:list', '--brand', String(brandId), '--status', 'paid', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.json().data.map((i: { id: string }) => i.id)).toContain(invoice.id);
    expect((await runCli(t, ['invoices:list', '--status', 'unpaid'])).code).toBe(64);
    const refused = await runCli(t, ['invoices:void', '--invoice', invoice.id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('INVOICE_ALREADY_PAID');
  });
});
