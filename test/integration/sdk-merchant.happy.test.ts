import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedCompletedTransaction, seedGateway } from '../support/seed.ts';
import { PaycollectMerchant, VERSION, constructEvent, webhooks, WebhookSignatureError } from '../../clients/merchant/index.ts';
import { signatureHeader } from '../../server/domain/webhooks/signature.ts';

let t: TestContext;
let client: PaycollectMerchant;
let apiKey: string;
let brandId: number;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey, brandId } = await t.createBrand('SDK Brand'));
  client = new PaycollectMerchant({ apiKey, baseUrl: t.baseUrl });
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

describe('merchant SDK against the live service', () => {
  it('brand.get() returns the brand of the key', async () => {
    const brand = await client.brand.get();
    expect(brand.id).toBe(brandId);
    expect(brand.name).toBe('SDK Brand');
  });

  it('payments.create() then payments.get(id)', async () => {
    const created = await client.payments.create({ amount: '1250.00', currency: 'BDT', reference: 'order-1', customer: { email: 'Rahim@Example.com' } });
    expect(created).toMatchObject({ status: 'pending', amount: '1250.00', currency: 'BDT', reference: 'order-1' });
    expect(created.checkout_url).toBe(`${t.config.PUBLIC_BASE_URL}/checkout/${created.payment_id}`);
    const payment = await client.payments.get(created.payment_id);
    expect(payment).toMatchObject({ object: 'payment_intent', payment_id: created.payment_id, status: 'pending', amount: '1250.00', trx_id: null });
    expect(payment.customer).toEqual({ name: null, email: 'rahim@example.com' });
  });

  it('payments.list() searches, payments.cancel(id) cancels, refunds.create() takes a payment_id', async () => {
    const created = await client.payments.create({ amount: '70.00', currency: 'BDT', reference: 'sdk-list-1', customer: { email: 'sdk-list@example.com' } });
    const page = await client.payments.list({ customer_email: 'sdk-list@example.com' });
    expect(page.data.map((p) => p.payment_id)).toEqual([created.payment_id]);
    expect(page.data[0]!.customer).toMatchObject({ email_masked: expect.stringContaining('*') });
    const canceled = await client.payments.cancel(created.payment_id);
    expect(canceled).toMatchObject({ payment_id: created.payment_id, status: 'canceled' });
    const { paymentId } = await seedCompletedTransaction(t, { apiKey, gateway: await seedGateway(t, 'bkash'), amount: '80.00' });
    const refund = await client.refunds.create({ payment_id: paymentId, amount: '5.00' });
    expect(refund).toMatchObject({ amount: '5.00', status: 'pending' });
  });

  it('the same Idempotency-Key replays the first payment instead of creating a second', async () => {
    const body = { amount: '99.00', currency: 'BDT', reference: 'idem-1' };
    const first = await client.payments.create(body, { idempotencyKey: 'sdk-order-77' });
    const again = await client.payments.create(body, { idempotencyKey: 'sdk-order-77' });
    expect(again.payment_id).toBe(first.payment_id);
    const rows = await t.sql<{ n: string }>("SELECT count(*) AS n FROM payment_intents WHERE reference = 'idem-1'");
    expect(rows[0]!.n).toBe('1');
  });

  it('refunds.list.pages() walks every refund page by page; .items() yields each once', async () => {
    const gateway = await seedGateway(t, 'bkash');
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway, amount: '500.00' });
    const created: number[] = [];
    for (let i = 0; i < 12; i++) created.push((await client.refunds.create({ trx_id: transaction.trxId, amount: '10.00', reason: `r${i}` })).id);

    const pages = [];
    for await (const page of client.refunds.list.pages({ per_page: 5, trx_id: transaction.trxId })) pages.push(page);
    expect(pages.map((p) => [p.meta.page, p.meta.total_pages, p.data.length])).toEqual([
      [1, 3, 5],
      [2, 3, 5],
      [3, 3, 2],
    ]);
    const listed = pages.flatMap((p) => p.data.map((r) => r.id));
    expect(new Set(listed)).toEqual(new Set(created));
    expect(listed).toHaveLength(12);

    const items = [];
    for await (const refund of client.refunds.list.items({ per_page: 100, trx_id: transaction.trxId })) items.push(refund);
    expect(items.map((r) => r.id).sort((a, b) => a - b)).toEqual([...created].sort((a, b) => a - b));
    expect(items.every((r) => r.amount === '10.00' && r.status === 'pending')).toBe(true);

    const latest = await client.refunds.get(transaction.trxId);
    expect(created).toContain(latest.id);
  });

  it('customers.list.pages() and customers.get(email)', async () => {
    for (const email of ['a1@example.com', 'a2@example.com', 'a3@example.com']) {
      await client.payments.create({ amount: '10.00', currency: 'BDT', customer: { email, name: email.slice(0, 2) } });
    }
    const pages = [];
    for await (const page of client.customers.list.pages({ per_page: 2 })) pages.push(page);
    const total = pages[0]!.meta.total;
    expect(total).toBeGreaterThanOrEqual(3);
    expect(pages).toHaveLength(Math.ceil(total / 2));
    expect(pages.flatMap((p) => p.data)).toHaveLength(total);
    expect(pages[0]!.data[0]!.email_masked).toMatch(/\*/);

    const customer = await client.customers.get('a2@example.com');
    expect(customer).toMatchObject({ email: 'a2@example.com', name: 'a2' });
  });

  it('sends a User-Agent and X-Client naming the SDK and its version', async () => {
    const seen: Headers[] = [];
    const spy = new PaycollectMerchant({
      apiKey,
      baseUrl: t.baseUrl,
      fetch: (url, init) => {
        seen.push(new Headers(init.headers));
        return fetch(url, init);
      },
    });
    await spy.brand.get();
    expect(seen[0]!.get('x-client')).toBe(`@paycollect/merchant/${VERSION}`);
    expect(seen[0]!.get('user-agent')).toBe(`@paycollect/merchant/${VERSION} node/${process.version}`);
    expect(seen[0]!.get('authorization')).toBe(`Bearer ${apiKey}`);
  });

  it('does not show the API key when the client is logged', () => {
    expect(JSON.stringify(client)).not.toContain(apiKey);
    expect(Object.values(client).some((v) => typeof v === 'string' && v.includes(apiKey))).toBe(false);
  });
});

describe('webhooks.constructEvent', () => {
  const secret = 'whsec_test_secret_value_0123456789';
  const sample = {
    id: 'evt_1',
    event: 'payment.completed',
    created_at: '2026-11-21T10:00:00.000Z',
    livemode: false,
    data: { payment_id: '5d3c2a4e-8f1b-4c3d-9e2f-1a2b3c4d5e6f', trx_id: 'T1', amount: '10.00', currency: 'BDT', status: 'completed' },
  } as const;
  const raw = JSON.stringify(sample);

  it('verifies a delivery signed by the service and returns the event', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = { 'x-webhook-signature': signatureHeader([secret], now, raw) };
    const event = client.webhooks.constructEvent(raw, headers, secret);
    expect(event).toEqual(JSON.parse(raw));
    expect(webhooks.constructEvent).toBe(constructEvent);
    expect(client.webhooks.constructEvent).toBe(constructEvent);
  });

  it('rejects a tampered body and a stale timestamp', () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = { 'x-webhook-signature': signatureHeader([secret], now, raw) };
    expect(() => client.webhooks.constructEvent(raw.replace('10.00', '99.00'), headers, secret)).toThrow(WebhookSignatureError);
    const old = { 'x-webhook-signature': signatureHeader([secret], now - 301, raw) };
    expect(() => client.webhooks.constructEvent(raw, old, secret)).toThrow('outside the tolerance');
    expect(client.webhooks.constructEvent(raw, old, secret, 600).id).toBe('evt_1');
  });

  it('validates the body against the event schemas: a signed but malformed event and an unknown event name are refused by reason', () => {
    const now = Math.floor(Date.now() / 1000);
    const signed = (body: string) => ({ 'x-webhook-signature': signatureHeader([secret], now, body) });
    const noAmount = JSON.stringify({ ...sample, data: { ...sample.data, amount: undefined } });
    expect(() => constructEvent(noAmount, signed(noAmount), secret)).toThrow(expect.objectContaining({ reason: 'invalid_payload', message: expect.stringContaining('data.amount') }));
    const future = JSON.stringify({ ...sample, event: 'gateway.future_event' });
    expect(() => constructEvent(future, signed(future), secret)).toThrow(expect.objectContaining({ reason: 'unknown_event' }));
    // Members the service adds later are kept.
    const extra = JSON.stringify({ ...sample, data: { ...sample.data, new_member: 1 } });
    expect(constructEvent(extra, signed(extra), secret).data).toMatchObject({ new_member: 1 });
  });

  it('signTestPayload signs like the service: the service-side verifier and constructEvent accept it', () => {
    const { body, headers } = webhooks.signTestPayload(sample, secret, { timestamp: 1_800_000_000 });
    expect(body).toBe(raw);
    expect(headers['x-webhook-signature']).toBe(signatureHeader([secret], 1_800_000_000, raw));
    expect(headers).toMatchObject({ 'content-type': 'application/json', 'x-webhook-id': 'evt_1', 'x-webhook-event': 'payment.completed' });
    const event = constructEvent(body, headers, secret, 300, 1_800_000_000 * 1000);
    if (event.event !== 'payment.completed') throw new Error('narrowing');
    expectTypeOf(event.data.amount).toEqualTypeOf<string>();
    expect(event.data.amount).toBe('10.00');
    expect(webhooks.generateTestHeaderString(raw, secret, { timestamp: 1_800_000_000 })).toBe(headers['x-webhook-signature']);
  });
});
