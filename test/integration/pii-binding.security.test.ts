import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { updateFilterRules } from '../../server/domain/filter-rules/service.ts';
import { createPayment } from '../support/seed.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';

/**
 * Personal data bound to its row and brand: a ciphertext copied in SQL to
 * another row or brand is never served as that row's data (the read fails
 * with a bare 500), blind indexes differ per brand, and SMS senders and
 * notification texts are not in clear in a dump.
 */

let t: TestContext;
let admin: Record<string, string>;
let a: { apiKey: string; brandId: number };
let b: { apiKey: string; brandId: number };

beforeAll(async () => {
  t = await startTestServer();
  admin = { authorization: `Bearer ${t.runtime.deps.secrets.adminToken}` };
  a = await t.createBrand('Bind A');
  b = await t.createBrand('Bind B');
});
afterAll(() => t?.close());

const customer = (brandId: number, email: string) =>
  t.sql<{ id: string; email_hash: string; email_encrypted: string; name_encrypted: string }>('SELECT * FROM customers WHERE brand_id = $1 AND email_hash IS NOT NULL AND id = (SELECT max(id) FROM customers WHERE brand_id = $1)', [brandId]).then((r) => {
    expect(r[0], email).toBeDefined();
    return r[0]!;
  });

function expectBare500(res: { status: number; body: any }, ...notShown: string[]) {
  expect(res.status).toBe(500);
  expect(res.body.errors[0].code).toBe('INTERNAL_ERROR');
  for (const s of notShown) expect(JSON.stringify(res.body)).not.toContain(s);
}

describe('customers', () => {
  it('the same email in two brands has two unrelated blind indexes, and each brand finds its own', async () => {
    await createPayment(t, a.apiKey, { customer: { name: 'Same Person', email: 'same.person@example.com' } });
    const inA = await customer(a.brandId, 'same.person@example.com');
    await createPayment(t, b.apiKey, { customer: { email: 'Same.Person@Example.com' } });
    const inB = await customer(b.brandId, 'same.person@example.com');
    expect(inA.email_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(inB.email_hash).not.toBe(inA.email_hash);
    for (const brand of [a, b]) {
      const res = await t.request('GET', '/api/v1/customers/same.person%40example.com', { token: brand.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.data.email).toBe('same.person@example.com');
    }
  });

  it('an email token copied onto another customer of the same brand is not served as that customer’s', async () => {
    await createPayment(t, a.apiKey, { customer: { email: 'victim@example.com' } });
    const victim = await customer(a.brandId, 'victim@example.com');
    await createPayment(t, a.apiKey, { customer: { email: 'thief@example.com' } });
    const thief = await customer(a.brandId, 'thief@example.com');
    await t.sql('UPDATE customers SET email_encrypted = $1 WHERE id = $2', [victim.email_encrypted, thief.id]);
    expectBare500(await t.request('GET', '/api/v1/customers/thief%40example.com', { token: a.apiKey }), 'victim@example.com');
    // The victim's own row still reads.
    expect((await t.request('GET', '/api/v1/customers/victim%40example.com', { token: a.apiKey })).body.data.email).toBe('victim@example.com');
  });

  it('a name token copied into another brand’s customer is not served there, nor in the list', async () => {
    await createPayment(t, a.apiKey, { customer: { name: 'Secret Name A', email: 'owner.a@example.com' } });
    const source = await customer(a.brandId, 'owner.a@example.com');
    const other = await t.createBrand('Bind C');
    await createPayment(t, other.apiKey, { customer: { name: 'Plain C', email: 'owner.c@example.com' } });
    const target = await customer(other.brandId, 'owner.c@example.com');
    await t.sql('UPDATE customers SET name_encrypted = $1 WHERE id = $2', [source.name_encrypted, target.id]);
    expectBare500(await t.request('GET', '/api/v1/customers/owner.c%40example.com', { token: other.apiKey }), 'Secret Name A');
    expectBare500(await t.request('GET', '/api/v1/customers', { token: other.apiKey }), 'Secret Name A');
  });

  it('an old unbound (v1) token written into a row is refused', async () => {
    await createPayment(t, a.apiKey, { customer: { email: 'legacy.paste@example.com' } });
    const row = await customer(a.brandId, 'legacy.paste@example.com');
    const old = t.runtime.deps.crypto.pii.encryptUnbound('planted@example.com', 'customer.email');
    await t.sql('UPDATE customers SET email_encrypted = $1 WHERE id = $2', [old, row.id]);
    expectBare500(await t.request('GET', '/api/v1/customers/legacy.paste%40example.com', { token: a.apiKey }), 'planted@example.com');
  });
});

describe('SMS records and notifications', () => {
  let d1: PairedDevice;
  let d2: PairedDevice;
  const SENDER = '01999888777';
  const TITLE = 'Payout for Nusrat Jahan';
  const BODY = 'Nusrat Jahan paid 4321.00 from 01888777666';

  beforeAll(async () => {
    d1 = await pairDevice(t, { brandId: a.brandId });
    d2 = await pairDevice(t, { brandId: b.brandId });
    // The service screens forwarded SMS with the brand's filter rules: let these texts through.
    for (const brandId of [a.brandId, b.brandId]) await updateFilterRules(t.runtime.deps.db, brandId, { extraSenders: [SENDER], positiveKeywords: [] });
  });

  const forward = async (d: PairedDevice, id: string, body: string) => {
    const res = await deviceRequest(t, d, 'POST', '/sms/messages', { messages: [{ device_message_id: id, sender: SENDER, body, received_at: new Date().toISOString() }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data[0].id as number;
  };

  it('a body or sender token copied to another record is refused: by the admin read and by matching', async () => {
    const first = await forward(d1, 'bind-1', 'Your own private text one');
    const second = await forward(d1, 'bind-2', 'Another text two');
    await t.sql('UPDATE sms_records SET body_encrypted = (SELECT body_encrypted FROM sms_records WHERE id = $1) WHERE id = $2', [first, second]);
    expectBare500(await t.request('GET', `/api/admin/v1/sms-records/${second}?include=body`, { headers: admin }), 'private text');
    const ok = await t.request('GET', `/api/admin/v1/sms-records/${first}?include=body`, { headers: admin });
    expect(ok.body.data).toMatchObject({ sender: SENDER, body: 'Your own private text one' });

    // Another brand's record: the sender token copied across brands.
    const foreign = await forward(d2, 'bind-3', 'Brand B text');
    await t.sql("UPDATE sms_records SET sender = (SELECT sender FROM sms_records WHERE id = $1), match_status = 'pending' WHERE id = $2", [first, foreign]);
    expectBare500(await t.request('GET', `/api/admin/v1/sms-records/${foreign}`, { headers: admin }), SENDER);
    const [copied] = await t.sql<{ sender: string }>('SELECT sender FROM sms_records WHERE id = $1', [foreign]);
    expect(() => t.runtime.deps.crypto.pii.decrypt(copied!.sender, 'sms_record.sender', { brandId: b.brandId, row: `${d2.deviceId}:bind-3` })).toThrow('failed authentication');
  });

  it('a notification title copied to another notification is not sent to the device', async () => {
    const send = (d: PairedDevice, title: string, body: string) => t.request('POST', `/api/admin/v1/devices/${d.deviceId}/notifications`, { headers: admin, body: { title, body } });
    const one = await send(d1, TITLE, BODY);
    expect(one.status, JSON.stringify(one.body)).toBe(201);
    const listed = await deviceRequest(t, d1, 'GET', '/notifications');
    expect(listed.body.data).toEqual([expect.objectContaining({ title: TITLE, body: BODY })]);
    const two = await send(d2, 'Hello', 'World');
    await t.sql('UPDATE notifications SET title = (SELECT title FROM notifications WHERE id = $1) WHERE id = $2', [one.body.data.id, two.body.data.id]);
    expectBare500(await deviceRequest(t, d2, 'GET', '/notifications'), TITLE);
  });

  it('no table holds the SMS sender, the notification texts or the outbound SMS in clear', async () => {
    await forward(d1, 'bind-dump', 'Dump check text');
    await t.request('POST', `/api/admin/v1/devices/${d1.deviceId}/notifications`, { headers: admin, body: { title: TITLE, body: BODY } });
    const out = await t.request('POST', `/api/admin/v1/brands/${a.brandId}/outbound-sms`, { headers: admin, body: { phone: '01777666555', message: 'Outbound for Nusrat Jahan' } });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    const tables = await t.sql<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_schema IN ('public', 'pgboss') AND table_type = 'BASE TABLE'`,
    );
    const forbidden = ['1999888777', 'Nusrat', 'Payout for', '1888777666', '1777666555', 'Dump check text'];
    let scanned = 0;
    for (const { schema, name } of tables) {
      // Admin configuration, not forwarded data: this test allows the number as an extra sender there.
      if (name === 'sms_filter_rules') continue;
      const [row] = await t.sql<{ dump: string | null }>(`SELECT string_agg(x::text, E'\\n') AS dump FROM "${schema}"."${name}" x`);
      const dump = row?.dump ?? '';
      scanned += dump.length;
      for (const s of forbidden) expect(dump.includes(s), `${schema}.${name} holds ${s} in clear`).toBe(false);
    }
    expect(scanned).toBeGreaterThan(1000);
    // ...and they still read through the API.
    const leased = await deviceRequest(t, d1, 'GET', '/sms/queues');
    expect(JSON.stringify(leased.body)).toContain('Outbound for Nusrat Jahan');
  });
});
