import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, InvalidRequestError, NotFoundError, PaycollectError, PaycollectMerchant, PermissionError } from '../../clients/merchant/index.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';

/** Customers as a resource through the merchant SDK (README.md, Customers). */

let t: TestContext;
let brandId: number;
let apiKey: string;
let client: PaycollectMerchant;
let testClient: PaycollectMerchant;
let other: PaycollectMerchant;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ brandId, apiKey } = await t.createBrand('Customer Resource'));
  client = new PaycollectMerchant({ apiKey, baseUrl: t.baseUrl, maxRetries: 0 });
  const testKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'test', mode: 'test' })).key;
  testClient = new PaycollectMerchant({ apiKey: testKey, baseUrl: t.baseUrl, maxRetries: 0 });
  other = new PaycollectMerchant({ apiKey: (await t.createBrand('Other Brand')).apiKey, baseUrl: t.baseUrl, maxRetries: 0 });
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

async function caught(p: Promise<unknown>): Promise<PaycollectError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(PaycollectError);
    return err as PaycollectError;
  }
  throw new Error('expected the call to fail');
}

const customerRows = () => t.sql<{ uuid: string; mode: string; name_encrypted: string | null; email_hash: string | null }>(
  'SELECT uuid, mode, name_encrypted, email_hash FROM customers WHERE brand_id = $1 ORDER BY id',
  [brandId],
);

describe('create, read, change, delete', () => {
  it('creates a customer with normalised details, stored encrypted, and reads it back by uuid, email and phone', async () => {
    const c = await client.customers.create({ name: ' Rahim Uddin ', email: 'Rahim@Example.COM ', phone: '01712345001' });
    expect(c).toMatchObject({ name: 'Rahim Uddin', email: 'rahim@example.com', phone: '+8801712345001', livemode: true });
    expect(c.lastResponse.status).toBe(201);
    for (const id of [c.uuid, 'rahim@example.com', '01712345001']) expect((await client.customers.retrieve(id)).id).toBe(c.id);
    const [row] = await t.sql<{ name_encrypted: string; email_encrypted: string }>('SELECT name_encrypted, email_encrypted FROM customers WHERE uuid = $1', [c.uuid]);
    expect(row!.name_encrypted).not.toContain('Rahim');
    expect(row!.email_encrypted).not.toContain('rahim');
  });

  it('changes the given fields only; null removes one; the blind index follows the new email', async () => {
    const c = await client.customers.create({ name: 'Karim', email: 'karim@example.com', phone: '01712345002' });
    const changed = await client.customers.update(c.uuid, { email: 'karim.new@example.com', name: null });
    expect(changed).toMatchObject({ uuid: c.uuid, name: null, email: 'karim.new@example.com', phone: '+8801712345002' });
    expect((await client.customers.retrieve('karim.new@example.com')).uuid).toBe(c.uuid);
    expect((await caught(client.customers.retrieve('karim@example.com'))).code).toBe('CUSTOMER_NOT_FOUND');
    const phoneOnly = await client.customers.update(c.uuid, { email: null });
    expect(phoneOnly.email).toBeNull();
  });

  it('delete erases the personal data, keeps the payments, and frees the email for a new customer', async () => {
    const payment = await createPayment(t, apiKey, { customer: { name: 'Erase Me', email: 'erase@example.com', phone: '01712345003' } });
    const c = await client.customers.retrieve('erase@example.com');
    await client.customers.del(c.uuid);
    const [row] = await t.sql<Record<string, unknown>>('SELECT name_encrypted, email_encrypted, phone_encrypted, email_hash, phone_hash, erased_at FROM customers WHERE uuid = $1', [c.uuid]);
    expect(row).toMatchObject({ name_encrypted: null, email_encrypted: null, phone_encrypted: null, email_hash: null, phone_hash: null });
    expect(row!.erased_at).not.toBeNull();
    const kept = await client.payments.retrieve(payment.payment_id);
    expect(kept).toMatchObject({ payment_id: payment.payment_id, amount: payment.amount });
    expect(JSON.stringify(kept)).not.toContain('erase@example.com');
    for (const id of [c.uuid, 'erase@example.com', '01712345003']) expect((await caught(client.customers.retrieve(id))).code).toBe('CUSTOMER_NOT_FOUND');
    expect((await client.customers.list({ per_page: 100 })).data.map((x) => x.uuid)).not.toContain(c.uuid);
    expect((await caught(client.customers.del(c.uuid))).code).toBe('CUSTOMER_NOT_FOUND');
    const again = await client.customers.create({ email: 'erase@example.com' });
    expect(again.uuid).not.toBe(c.uuid);
  });
});

describe('failures', () => {
  it('a duplicate email or phone in the brand and mode: 409 naming the field, nothing written', async () => {
    await client.customers.create({ name: 'Dup', email: 'dup@example.com', phone: '01712345010' });
    const before = (await customerRows()).length;
    const email = await caught(client.customers.create({ email: 'DUP@example.com' }));
    expect(email).toBeInstanceOf(ConflictError);
    expect([email.status, email.code, email.field]).toEqual([409, 'CUSTOMER_EMAIL_TAKEN', 'email']);
    const phone = await caught(client.customers.create({ email: 'fresh@example.com', phone: '+880 1712-345010' }));
    expect([phone.code, phone.field]).toEqual(['CUSTOMER_PHONE_TAKEN', 'phone']);
    expect((await customerRows()).length).toBe(before);
  });

  it('changing to another customer\u2019s email or phone: 409, the customer unchanged', async () => {
    const a = await client.customers.create({ email: 'a-change@example.com', phone: '01712345020' });
    await client.customers.create({ email: 'b-change@example.com', phone: '01712345021' });
    const e = await caught(client.customers.update(a.uuid, { email: 'b-change@example.com' }));
    expect([e.status, e.code, e.field]).toEqual([409, 'CUSTOMER_EMAIL_TAKEN', 'email']);
    const p = await caught(client.customers.update(a.uuid, { phone: '01712345021' }));
    expect([p.status, p.code, p.field]).toEqual([409, 'CUSTOMER_PHONE_TAKEN', 'phone']);
    expect(await client.customers.retrieve(a.uuid)).toMatchObject({ email: 'a-change@example.com', phone: '+8801712345020' });
  });

  it.each([
    ['a bad email', { email: 'not-an-email' }, 'email'],
    ['a bad phone', { phone: '01212345678' }, 'phone'],
    ['neither email nor phone', { name: 'Nobody' }, 'email'],
    ['an unknown field', { email: 'x@example.com', address: 'Dhaka' }, 'address'],
    ['a name too long', { email: 'long@example.com', name: 'x'.repeat(201) }, 'name'],
  ])('create with %s: 400 VALIDATION_ERROR naming the field', async (_n, body, field) => {
    const res = await t.request('POST', '/api/v1/customers', { token: apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String), request_id: expect.any(String) });
    expect(res.body.errors).toContainEqual({ code: 'VALIDATION_ERROR', field, message: expect.any(String) });
  });

  it('a change removing both contacts or with nothing to change: 400; a malformed id: 400', async () => {
    const c = await client.customers.create({ email: 'keep@example.com' });
    const both = await caught(client.customers.update(c.uuid, { email: null }));
    expect(both).toBeInstanceOf(InvalidRequestError);
    expect(both.code).toBe('VALIDATION_ERROR');
    expect((await t.request('PATCH', `/api/v1/customers/${c.uuid}`, { token: apiKey, body: {} })).status).toBe(400);
    expect((await t.request('PATCH', '/api/v1/customers/12', { token: apiKey, body: { name: 'x' } })).status).toBe(400);
    expect((await client.customers.retrieve(c.uuid)).email).toBe('keep@example.com');
  });
});

describe('isolation and scopes', () => {
  it("another brand's customer is a 404 to read, change and delete", async () => {
    const c = await client.customers.create({ email: 'mine@example.com' });
    for (const call of [() => other.customers.retrieve(c.uuid), () => other.customers.update(c.uuid, { name: 'x' }), () => other.customers.del(c.uuid)]) {
      const err = await caught(call());
      expect(err).toBeInstanceOf(NotFoundError);
      expect(err.code).toBe('CUSTOMER_NOT_FOUND');
    }
    // The other brand may have a customer with the same email: uniqueness is per brand.
    expect((await other.customers.create({ email: 'mine@example.com' })).email).toBe('mine@example.com');
    expect((await client.customers.retrieve(c.uuid)).name).toBeNull();
  });

  it('test and live customers are separate: the same email in both, each invisible to the other key', async () => {
    const live = await client.customers.create({ email: 'both-modes@example.com' });
    const test = await testClient.customers.create({ email: 'both-modes@example.com' });
    expect(test.livemode).toBe(false);
    expect((await caught(testClient.customers.retrieve(live.uuid))).code).toBe('CUSTOMER_NOT_FOUND');
    expect((await caught(testClient.customers.del(live.uuid))).code).toBe('CUSTOMER_NOT_FOUND');
    expect((await caught(client.customers.update(test.uuid, { name: 'x' }))).code).toBe('CUSTOMER_NOT_FOUND');
    expect((await testClient.customers.list()).data.map((x) => x.uuid)).toEqual([test.uuid]);
  });

  it('a read-only key reads customers and is refused create, change and delete (403 naming `write`); a write-only key the reverse', async () => {
    const c = await client.customers.create({ email: 'scoped@example.com' });
    const readKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'read', mode: 'live', scopes: ['read'] })).key;
    const reader = new PaycollectMerchant({ apiKey: readKey, baseUrl: t.baseUrl, maxRetries: 0 });
    expect((await reader.customers.retrieve(c.uuid)).uuid).toBe(c.uuid);
    for (const call of [() => reader.customers.create({ email: 'nope@example.com' }), () => reader.customers.update(c.uuid, { name: 'x' }), () => reader.customers.del(c.uuid)]) {
      const err = await caught(call());
      expect(err).toBeInstanceOf(PermissionError);
      expect(err.code).toBe('INSUFFICIENT_SCOPE');
      expect(err.message).toContain('`write`');
    }
    const writeKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'write', mode: 'live', scopes: ['write'] })).key;
    const writer = new PaycollectMerchant({ apiKey: writeKey, baseUrl: t.baseUrl, maxRetries: 0 });
    expect((await writer.customers.create({ email: 'writer@example.com' })).email).toBe('writer@example.com');
    expect((await caught(writer.customers.list())).code).toBe('INSUFFICIENT_SCOPE');
    expect((await client.customers.retrieve(c.uuid)).name).toBeNull();
  });

  it('the OwnPay dialect keeps its own POST /customers on the same path (op_ key), answering CONFLICT', async () => {
    const opKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'op', mode: 'live', dialect: 'ownpay' })).key;
    const created = await t.request('POST', '/api/v1/customers', { token: opKey, body: { name: 'Op', email: 'op-dialect@example.com' } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body.data).sort()).toEqual(['id', 'uuid']);
    const again = await t.request('POST', '/api/v1/customers', { token: opKey, body: { name: 'Op', email: 'op-dialect@example.com' } });
    expect([again.status, again.body.errors[0].code, again.body.errors[0].field]).toEqual([409, 'CONFLICT', 'email']);
    const native = await caught(client.customers.create({ email: 'op-dialect@example.com' }));
    expect(native.code).toBe('CUSTOMER_EMAIL_TAKEN');
  });
});
