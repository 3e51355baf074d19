import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';

let t: TestContext;
let apiKey: string;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('Customer Shop'));
  await seedGateway(t, 'bkash');
  await createPayment(t, apiKey, { customer: { name: 'Jane Doe', email: 'Jane.Doe@Example.com', phone: '01712345678' } });
});
afterAll(() => t?.close());

const get = (identifier: string, key = apiKey) => t.request('GET', `/api/v1/customers/${encodeURIComponent(identifier)}`, { token: key });

describe('GET /api/v1/customers/{identifier}', () => {
  it.each([
    ['the email as given', 'Jane.Doe@Example.com'],
    ['the email in other case with spaces', '  jane.doe@EXAMPLE.com '],
    ['the phone in E.164', '+8801712345678'],
    ['the national phone', '01712345678'],
    ['the phone with separators', '017-1234-5678'],
    ['the phone without plus', '8801712345678'],
  ])('finds the customer by %s, with personal data in clear', async (_name, identifier) => {
    const res = await get(identifier);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Jane Doe',
      email: 'jane.doe@example.com',
      phone: '+8801712345678',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      livemode: true,
    });
  });

  it('a phone-only customer has email null', async () => {
    await createPayment(t, apiKey, { customer: { phone: '+8801912345678' } });
    const res = await get('01912345678');
    expect(res.body.data).toMatchObject({ name: null, email: null, phone: '+8801912345678' });
  });
});

describe('GET /api/v1/customers', () => {
  let listKey: string;
  beforeAll(async () => {
    ({ apiKey: listKey } = await t.createBrand('Customer List'));
    for (let i = 1; i <= 5; i++) {
      await createPayment(t, listKey, { customer: { name: `Customer ${i}`, email: `c${i}@example.org`, phone: `+880171000000${i}` } });
    }
    await createPayment(t, listKey, { customer: { name: 'No Phone', email: 'nophone@example.org' } });
  });

  const list = (qs = '') => t.request('GET', `/api/v1/customers${qs}`, { token: listKey });

  it('lists newest first with masked email and phone and meta {page, per_page, total}', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, per_page: 20, total: 6 });
    expect(res.body.data.map((c: { name: string }) => c.name)).toEqual(['No Phone', 'Customer 5', 'Customer 4', 'Customer 3', 'Customer 2', 'Customer 1']);
    expect(res.body.data[1]).toEqual({
      id: expect.any(Number),
      uuid: expect.any(String),
      name: 'Customer 5',
      email_masked: 'c***@example.org',
      phone_masked: '+88017*****005',
      created_at: expect.any(String),
      livemode: true,
    });
    expect(res.body.data[0]).toMatchObject({ email_masked: 'n***@example.org', phone_masked: null });
    // Lists never carry clear contact details.
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('c5@example.org');
    expect(text).not.toContain('1710000005');
  });

  it('pages: per_page 1, the last page, past the end, per_page 100', async () => {
    const one = await list('?per_page=1&page=6');
    expect(one.body.data.map((c: { name: string }) => c.name)).toEqual(['Customer 1']);
    expect(one.body.meta).toEqual({ page: 6, per_page: 1, total: 6 });
    const past = await list('?per_page=5&page=3');
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ data: [], meta: { page: 3, per_page: 5, total: 6 } });
    expect((await list('?per_page=100')).body.meta).toEqual({ page: 1, per_page: 100, total: 6 });
  });
});
