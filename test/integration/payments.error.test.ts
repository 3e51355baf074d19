import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';

let t: TestContext;
let apiKey: string;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('Error Shop'));
  // BDT 10.00 .. 25,000.00 and BDT 5.00 .. 50,000.00: 50,000.00 is the highest any gateway takes.
  await seedGateway(t, 'bkash');
  await seedGateway(t, 'nagad', { min_amount: '5.00', max_amount: '50000.00' });
});
afterAll(() => t?.close());

const FORMAT = 'Amount must be a decimal string with exactly two decimal places, e.g. "1250.00"';

async function post(body: unknown) {
  return t.request('POST', '/api/v1/payments', { token: apiKey, body });
}

function expectError(res: { status: number; body: any }, status: number, code: string, field: string | null, message?: string) {
  expect(res.status).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.errors).toContainEqual({ code, field, message: message ?? expect.any(String) });
}

async function intentCount(): Promise<number> {
  return Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents'))[0]!.n);
}

describe('amount validation', () => {
  it.each([
    ['"0.00"', '0.00', 'Amount must be greater than zero'],
    ['"-1.00"', '-1.00', 'Amount must be greater than zero'],
    ['"1.5"', '1.5', FORMAT],
    ['"1e3"', '1e3', FORMAT],
    ['"abc"', 'abc', FORMAT],
    ['10 (a JSON number)', 10, FORMAT],
    ['10.5 (a JSON number)', 10.5, FORMAT],
    ['"1,000.00"', '1,000.00', FORMAT],
    ['" 10.00"', ' 10.00', FORMAT],
    ['"1000000000000.00" (13 integer digits)', '1000000000000.00', 'Amount exceeds maximum'],
    ['null', null, FORMAT],
  ])('%s is a 400 with the right message', async (_name, amount, message) => {
    const before = await intentCount();
    const res = await post({ amount, currency: 'BDT' });
    expectError(res, 400, 'VALIDATION_ERROR', 'amount', message);
    expect(res.body.errors).toHaveLength(1);
    expect(await intentCount()).toBe(before);
  });

  it('a missing amount names the field', async () => {
    const res = await post({ currency: 'BDT' });
    expectError(res, 400, 'VALIDATION_ERROR', 'amount');
  });

  it('above every gateway maximum: 422 AMOUNT_EXCEEDS_MAXIMUM "Amount exceeds maximum", nothing created', async () => {
    const before = await intentCount();
    const res = await post({ amount: '50000.01', currency: 'BDT' });
    expectError(res, 422, 'AMOUNT_EXCEEDS_MAXIMUM', 'amount', 'Amount exceeds maximum');
    expect(res.body.error).toBe('Amount exceeds maximum');
    expect(await intentCount()).toBe(before);
    // Exactly the highest maximum is fine.
    expect((await post({ amount: '50000.00', currency: 'BDT' })).status).toBe(201);
  });

  it('below every gateway minimum: 422 AMOUNT_BELOW_MINIMUM', async () => {
    const res = await post({ amount: '4.99', currency: 'BDT' });
    expectError(res, 422, 'AMOUNT_BELOW_MINIMUM', 'amount');
    expect((await post({ amount: '5.00', currency: 'BDT' })).status).toBe(201);
  });

  it('a currency no gateway takes and no rate converts: 422 CURRENCY_NOT_SUPPORTED', async () => {
    const res = await post({ amount: '10.00', currency: 'JPY' });
    expectError(res, 422, 'CURRENCY_NOT_SUPPORTED', 'currency', 'No gateway takes JPY, and no exchange rate converts JPY into BDT');
  });
});

describe('other fields', () => {
  it.each([
    ['lower-case currency', { currency: 'bdt' }, 'currency'],
    ['four-letter currency', { currency: 'BDTX' }, 'currency'],
    ['empty reference', { reference: '' }, 'reference'],
    ['reference too long', { reference: 'r'.repeat(101) }, 'reference'],
    ['expires_in below 60 s', { expires_in: 59 }, 'expires_in'],
    ['expires_in above 30 days', { expires_in: 2_592_001 }, 'expires_in'],
    ['expires_in not whole', { expires_in: 90.5 }, 'expires_in'],
    ['expires_in and expires_at', { expires_in: 600, expires_at: new Date(Date.now() + 3600_000).toISOString() }, 'expires_at'],
    ['expires_at with an offset', { expires_at: '2030-01-01T10:00:00+06:00' }, 'expires_at'],
    ['javascript: success URL', { success_url: 'javascript:alert(1)' }, 'success_url'],
    ['relative cancel URL', { cancel_url: '/cart' }, 'cancel_url'],
    ['metadata not an object', { metadata: ['a'] }, 'metadata'],
    ['metadata nested object', { metadata: { a: { b: 1 } } }, 'metadata.a'],
    ['metadata long value', { metadata: { a: 'x'.repeat(501) } }, 'metadata.a'],
    ['metadata too many keys', { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, 'metadata'],
    ['customer without email or phone', { customer: { name: 'Only Name' } }, 'customer'],
    ['customer with a bad email', { customer: { email: 'not-an-email' } }, 'customer.email'],
    ['customer with a bad phone', { customer: { phone: '12345' } }, 'customer.phone'],
    ['customer with a phone in free text', { customer: { phone: 'call 01712345678' } }, 'customer.phone'],
  ])('%s: 400 naming %s', async (_name, extra, field) => {
    const before = await intentCount();
    const res = await post({ amount: '100.00', currency: 'BDT', ...extra });
    expectError(res, 400, 'VALIDATION_ERROR', field);
    expect(await intentCount()).toBe(before);
  });

  it('expires_at in the past or beyond 30 days: 400 naming expires_at', async () => {
    for (const at of [new Date(Date.now() - 1000), new Date(Date.now() + 31 * 86400_000)]) {
      expectError(await post({ amount: '100.00', currency: 'BDT', expires_at: at.toISOString() }), 400, 'VALIDATION_ERROR', 'expires_at');
    }
  });

  it('unknown fields are a 400 naming each of them', async () => {
    const res = await post({ amount: '100.00', currency: 'BDT', amout: '1.00', customer: { email: 'a@b.co', nickname: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        { code: 'VALIDATION_ERROR', message: 'Unknown field `amout`', field: 'amout' },
        { code: 'VALIDATION_ERROR', message: 'Unknown field `customer.nickname`', field: 'customer.nickname' },
      ]),
    );
  });

  it('malformed JSON: 400 MALFORMED_JSON; another media type: 415', async () => {
    const bad = await t.request('POST', '/api/v1/payments', { token: apiKey, rawBody: '{"amount": "1.00",', headers: { 'content-type': 'application/json' } });
    expectError(bad, 400, 'MALFORMED_JSON', null);
    const form = await t.request('POST', '/api/v1/payments', { token: apiKey, rawBody: 'amount=1.00&currency=BDT', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectError(form, 415, 'UNSUPPORTED_MEDIA_TYPE', null);
  });

  it('a body that is not an object is a 400', async () => {
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, rawBody: '[]', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe('VALIDATION_ERROR');
  });
});

describe('GET /api/v1/payments/{payment_id} failures', () => {
  it.each([
    ['an unknown UUID', '7d1c3b1e-4a8f-4c3e-9b7e-2f1a6c9d0e11'],
    ['a malformed id', 'not-a-uuid'],
    ['an integer id', '1'],
    ['a UUID with trailing text', '7d1c3b1e-4a8f-4c3e-9b7e-2f1a6c9d0e11x'],
    ['SQL in the id', "' OR 1=1 --"],
  ])('%s: 404 PAYMENT_NOT_FOUND', async (_name, id) => {
    const res = await t.request('GET', `/api/v1/payments/${encodeURIComponent(id)}`, { token: apiKey });
    expectError(res, 404, 'PAYMENT_NOT_FOUND', null, 'Payment not found');
  });

  it('without a key: 401 UNAUTHORIZED, also for a payment that exists', async () => {
    const p = await createPayment(t, apiKey);
    expectError(await t.request('GET', `/api/v1/payments/${p.payment_id}`), 401, 'UNAUTHORIZED', null);
    expectError(await t.request('POST', '/api/v1/payments', { body: { amount: '1.00', currency: 'BDT' } }), 401, 'UNAUTHORIZED', null);
  });
});

/**
 * Every create is decided on the configuration current when it arrived: changes
 * here are made with plain SQL on a connection of the test's own, as another
 * process (the CLI, a second server) would make them, so nothing in the server
 * is told of them. A server and database of their own: the changes touch the
 * gateways every create reads.
 */
describe('gateway and expiry changes made elsewhere apply to the next create', () => {
  let c: TestContext;
  let key: string;
  let gateway: GatewayView;
  const intents = async () => Number((await c.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents'))[0]!.n);
  const create = (body: Record<string, unknown>, idempotencyKey?: string) =>
    c.request('POST', '/api/v1/payments', { token: key, body, ...(idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {}) });

  beforeAll(async () => {
    c = await startTestServer();
    ({ apiKey: key } = await c.createBrand('Changing Shop'));
    gateway = await seedGateway(c, 'bkash', { min_amount: '10.00', max_amount: '5000.00' });
    // Always enabled, takes at most 50: once `gateway` is gone, 100.00 is refused.
    await seedGateway(c, 'nagad', { min_amount: '10.00', max_amount: '50.00' });
  });
  afterAll(() => c?.close());

  beforeEach(async () => {
    await c.sql('UPDATE gateways SET enabled = true, max_amount = 5000.00 WHERE id = $1', [gateway.id]);
    await c.sql("DELETE FROM settings WHERE key = 'intent_expiry_minutes'");
    expect((await create({ amount: '100.00', currency: 'BDT' })).status).toBe(201);
  });

  for (const keyed of [false, true]) {
    const label = keyed ? 'with an Idempotency-Key' : 'without a key';

    it(`${label}: a maximum lowered elsewhere refuses the next create, and no intent is left behind`, async () => {
      await c.sql('UPDATE gateways SET max_amount = 50.00 WHERE id = $1', [gateway.id]);
      const before = await intents();
      const idempotencyKey = keyed ? randomUUID() : undefined;
      const res = await create({ amount: '100.00', currency: 'BDT' }, idempotencyKey);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'AMOUNT_EXCEEDS_MAXIMUM', field: 'amount' });
      expect(await intents()).toBe(before);
      if (idempotencyKey) {
        // The refusal is what the key stores and replays.
        const again = await create({ amount: '100.00', currency: 'BDT' }, idempotencyKey);
        expect(again.status).toBe(422);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(await intents()).toBe(before);
      }
    });

    it(`${label}: a gateway disabled elsewhere is seen: the one left takes at most 50, so 100.00 is refused`, async () => {
      await c.sql('UPDATE gateways SET enabled = false WHERE id = $1', [gateway.id]);
      const before = await intents();
      const res = await create({ amount: '100.00', currency: 'BDT' }, keyed ? randomUUID() : undefined);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'AMOUNT_EXCEEDS_MAXIMUM', field: 'amount' });
      expect(await intents()).toBe(before);
      // The other gateway still takes what it can.
      expect((await create({ amount: '40.00', currency: 'BDT' }, keyed ? randomUUID() : undefined)).status).toBe(201);
    });

    it(`${label}: an expiry setting changed elsewhere applies to the next create, which is stored once`, async () => {
      await c.sql(`INSERT INTO settings (key, value) VALUES ('intent_expiry_minutes', '7'::jsonb)`);
      const before = await intents();
      const res = await create({ amount: '100.00', currency: 'BDT' }, keyed ? randomUUID() : undefined);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const { created_at, expires_at, payment_id } = res.body.data;
      expect(Date.parse(expires_at) - Date.parse(created_at)).toBe(7 * 60_000);
      expect(await intents()).toBe(before + 1);
      const [row] = await c.sql<{ seconds: string }>('SELECT extract(epoch FROM expires_at - created_at) AS seconds FROM payment_intents WHERE uuid = $1', [payment_id]);
      expect(Number(row!.seconds)).toBe(420);
    });
  }

  it('a raised maximum is seen too: the amount the old one refused is now taken', async () => {
    await c.sql('UPDATE gateways SET max_amount = 50.00 WHERE id = $1', [gateway.id]);
    expect((await create({ amount: '100.00', currency: 'BDT' })).status).toBe(422);
    await c.sql('UPDATE gateways SET max_amount = 5000.00 WHERE id = $1', [gateway.id]);
    expect((await create({ amount: '100.00', currency: 'BDT' })).status).toBe(201);
  });
});
