import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, requestRefund, seedCompletedTransaction, seedGateway } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';

/** Brand isolation, and no personal data or credentials in the database or the logs. */

let t: TestContext;
let a: { apiKey: string; brandId: number };
let b: { apiKey: string; brandId: number };
let bkash: GatewayView;
let paymentA: string;
let trxA: { id: number; trxId: string };

const PII = {
  name: 'Farzana Rahman',
  email: 'Farzana.Secret@Example.com',
  phone: '01712399887',
  sender: '01812377665',
};

beforeAll(async () => {
  t = await startTestServer();
  a = await t.createBrand('Brand A');
  b = await t.createBrand('Brand B');
  bkash = await seedGateway(t, 'bkash');
  paymentA = (await createPayment(t, a.apiKey, { customer: { name: PII.name, email: PII.email, phone: PII.phone } })).payment_id;
  const seeded = await seedCompletedTransaction(t, {
    apiKey: a.apiKey,
    gateway: bkash,
    gatewayTrxId: 'BRANDA0001',
    senderNumber: PII.sender,
    customer: { name: PII.name, email: PII.email },
  });
  trxA = seeded.transaction;
  const refund = await requestRefund(t, a.apiKey, { trx_id: trxA.trxId, amount: '10.00', reason: 'isolation' }, { 'idempotency-key': 'sec-key-1' });
  expect(refund.status).toBe(201);
});
afterAll(() => t?.close());

const withoutRequestId = (body: any) => ({ ...body, request_id: undefined });

describe('brand B never sees brand A’s data: the same answer as for data that does not exist', () => {
  it('payments', async () => {
    const foreign = await t.request('GET', `/api/v1/payments/${paymentA}`, { token: b.apiKey });
    const unknown = await t.request('GET', '/api/v1/payments/0b7c2f0e-1111-4222-8333-944455556666', { token: b.apiKey });
    expect(foreign.status).toBe(404);
    expect(withoutRequestId(foreign.body)).toEqual(withoutRequestId(unknown.body));
    expect(foreign.body.errors[0].code).toBe('PAYMENT_NOT_FOUND');
    expect((await t.request('GET', `/api/v1/payments/${paymentA}`, { token: a.apiKey })).status).toBe(200);
  });

  it('refunds: lookup by either reference, list filters, and creating one', async () => {
    for (const ref of [trxA.trxId, 'BRANDA0001']) {
      const foreign = await t.request('GET', `/api/v1/refunds/${ref}`, { token: b.apiKey });
      const unknown = await t.request('GET', '/api/v1/refunds/TRXUNKNOWN0000', { token: b.apiKey });
      expect(foreign.status).toBe(404);
      expect(withoutRequestId(foreign.body)).toEqual(withoutRequestId(unknown.body));
    }
    for (const qs of ['', `?trx_id=${trxA.trxId}`, `?transaction_id=${trxA.id}`, '?trx_id=BRANDA0001']) {
      const list = await t.request('GET', `/api/v1/refunds${qs}`, { token: b.apiKey });
      expect(list.body).toMatchObject({ data: [], meta: { total: 0 } });
    }
    const create = await requestRefund(t, b.apiKey, { trx_id: trxA.trxId, amount: '1.00' });
    expect(create.status).toBe(404);
    expect(create.body.errors[0].code).toBe('PAYMENT_NOT_FOUND');
    expect((await t.sql('SELECT 1 FROM refunds WHERE brand_id = $1', [b.brandId])).length).toBe(0);
  });

  it('customers: lookup and list; the same email is a separate customer per brand', async () => {
    const foreign = await t.request('GET', `/api/v1/customers/${encodeURIComponent(PII.email)}`, { token: b.apiKey });
    const unknown = await t.request('GET', '/api/v1/customers/nobody%40example.com', { token: b.apiKey });
    expect(foreign.status).toBe(404);
    expect(withoutRequestId(foreign.body)).toEqual(withoutRequestId(unknown.body));
    expect((await t.request('GET', `/api/v1/customers/${PII.phone}`, { token: b.apiKey })).status).toBe(404);
    expect((await t.request('GET', '/api/v1/customers', { token: b.apiKey })).body.meta.total).toBe(0);

    const created = await createPayment(t, b.apiKey, { customer: { email: PII.email } });
    const mine = await t.request('GET', `/api/v1/customers/${encodeURIComponent(PII.email)}`, { token: a.apiKey });
    const theirs = await t.request('GET', `/api/v1/customers/${encodeURIComponent(PII.email)}`, { token: b.apiKey });
    expect(theirs.status).toBe(200);
    expect(theirs.body.data.uuid).not.toBe(mine.body.data.uuid);
    expect(theirs.body.data.name).toBeNull();
    expect(created.payment_id).not.toBe(paymentA);
  });

  it('idempotency keys: brand B reusing brand A’s key does not see A’s response', async () => {
    const res = await requestRefund(t, b.apiKey, { trx_id: trxA.trxId, amount: '10.00', reason: 'isolation' }, { 'idempotency-key': 'sec-key-1' });
    expect(res.status).toBe(404);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('personal data at rest and in logs', () => {
  const forbidden = () => {
    const digits = (s: string) => s.replace(/\D/g, '').replace(/^0/, '');
    return [
      PII.name,
      PII.name.toLowerCase(),
      PII.email,
      PII.email.toLowerCase(),
      digits(PII.phone), // 1712399887: in national, E.164 and +880 forms alike
      digits(PII.sender),
      a.apiKey,
      b.apiKey,
    ];
  };

  it('no table in the database holds a name, email, phone number or API key in clear', async () => {
    const tables = await t.sql<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_schema IN ('public', 'pgboss') AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((x) => x.name)).toEqual(expect.arrayContaining(['customers', 'payment_intents', 'transactions', 'refunds', 'idempotency_keys', 'api_keys']));
    let scanned = 0;
    for (const { schema, name } of tables) {
      const rows = await t.sql<{ dump: string | null }>(`SELECT string_agg(x::text, E'\\n') AS dump FROM "${schema}"."${name}" x`);
      const dump = rows[0]?.dump ?? '';
      scanned += dump.length;
      for (const secret of forbidden()) {
        expect(dump.includes(secret), `${schema}.${name} contains personal data or a key`).toBe(false);
      }
    }
    expect(scanned).toBeGreaterThan(1000);
  });

  it('stores AES-GCM tokens with key ids and keyed (not plain) hashes', async () => {
    const [c] = await t.sql<{ name_encrypted: string; email_encrypted: string; phone_encrypted: string; email_hash: string }>(
      'SELECT name_encrypted, email_encrypted, phone_encrypted, email_hash FROM customers WHERE brand_id = $1',
      [a.brandId],
    );
    for (const token of [c!.name_encrypted, c!.email_encrypted, c!.phone_encrypted]) expect(token).toMatch(/^v2\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(c!.email_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(c!.email_hash).not.toBe(createHash('sha256').update(PII.email.toLowerCase()).digest('hex'));
  });

  it('a ciphertext moved to another column does not decrypt (context-bound): a 500 without details', async () => {
    const { apiKey, brandId } = await t.createBrand('Tamper');
    await createPayment(t, apiKey, { customer: { name: 'Tamper Name', email: 'tamper@example.com' } });
    await t.sql('UPDATE customers SET name_encrypted = email_encrypted WHERE brand_id = $1', [brandId]);
    const res = await t.request('GET', '/api/v1/customers/tamper%40example.com', { token: apiKey });
    expect(res.status).toBe(500);
    expect(res.body.errors[0].code).toBe('INTERNAL_ERROR');
    expect(JSON.stringify(res.body)).not.toContain('tamper@example.com');
  });

  it('the logs never contain personal data or keys', async () => {
    // Lookups put the email and phone in the URL; the request log names the route pattern only.
    await t.request('GET', `/api/v1/customers/${encodeURIComponent(PII.email)}`, { token: a.apiKey });
    await t.request('GET', `/api/v1/customers/${PII.phone}`, { token: a.apiKey });
    const logs = t.logs.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of forbidden()) expect(logs.includes(secret)).toBe(false);
  });
});
