import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway, seedTransaction } from '../support/seed.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { PiiCipher, parseKeyring } from '../../server/infra/crypto/pii-cipher.ts';
import { blindIndex } from '../../server/infra/crypto/blind-index.ts';
import { createOrm, migrate } from '../../server/infra/database/orm.ts';
import { entities } from '../../server/domain/entities.ts';
import type { PersonalDataKeys } from '../../server/domain/customers/keys.ts';
import { reencryptPersonalData } from '../../server/domain/pii/reencrypt.ts';
import { smsContentHash } from '../../server/domain/sms/intake/content-hash.ts';
import { normalizeSender } from '../../server/domain/sms/templates/parser.ts';
import { updateFilterRules } from '../../server/domain/filter-rules/service.ts';
import { getTransaction } from '../../server/domain/payments/transactions.ts';
import { declaredPayerNumber } from '../../server/domain/sms/matching/service.ts';

/**
 * The start-up re-encryption (migration 0011's data step) on rows written in
 * the old format: unbound v1 tokens, blind indexes and content hashes without
 * the brand, SMS senders and notification texts in clear. The old values are
 * built exactly as the old code wrote them (the v1 AAD is `v1.<keyId>.<context>`,
 * which encryptUnbound still writes; the old hashes are spelled out below).
 */

let t: TestContext;
let admin: Record<string, string>;
let keys: PersonalDataKeys;
let a: { apiKey: string; brandId: number };
let b: { apiKey: string; brandId: number };
let device: PairedDevice;
/** A key that wrote some old values and is missing from configuration at first. */
const K0 = Buffer.alloc(32, 0x5a);

const oldBlindIndex = (kind: 'email' | 'phone', value: string) => createHmac('sha256', keys.blindIndexKey).update(`pc.bidx.v1:${kind}:${value}`, 'utf8').digest('hex');
const oldContentHash = (sender: string, body: string) =>
  createHmac('sha256', keys.blindIndexKey).update(`pc.smshash.v1:${normalizeSender(sender)}\n${body.normalize('NFC').replace(/\s+/gu, ' ').trim()}`, 'utf8').digest('hex');
const v1 = (plain: string, context: string) => keys.pii.encryptUnbound(plain, context);

const SMS = [
  { id: 'old-1', sender: 'bKash', body: 'You have received Tk 700.00 from 01711000111. TrxID OLD0000001' },
  { id: 'old-2', sender: '01999000222', body: 'Private note for the re-encryption test' },
  { id: 'old-3', sender: 'NAGAD', body: 'Money Received. Amount: Tk 80.00 TxnID: OLD0000003' },
];

async function dump(table: string): Promise<string> {
  const [row] = await t.sql<{ d: string | null }>(`SELECT string_agg(x::text, E'\\n' ORDER BY x.id) AS d FROM ${table} x`);
  return row!.d ?? '';
}
const TABLES = ['customers', 'sms_records', 'notifications', 'outbound_sms', 'transactions'];

let corruptName: string;
let customerIds: { a: string; b: string; extra: string[]; corrupt: string; k0: string };
let smsIds: number[];
let notificationId: number;
let outboundId: number;
let transactionId: number;

beforeAll(async () => {
  t = await startTestServer();
  admin = { authorization: `Bearer ${t.runtime.deps.secrets.adminToken}` };
  keys = t.runtime.deps.crypto;
  a = await t.createBrand('Old A');
  b = await t.createBrand('Old B');

  // Customers: the same email in two brands, a few more for several batches, one corrupt, one under the missing key k0.
  const newCustomer = async (brand: { apiKey: string; brandId: number }, email: string, phone?: string, name?: string) => {
    await createPayment(t, brand.apiKey, { customer: { email, ...(phone ? { phone } : {}), ...(name ? { name } : {}) } });
    const [row] = await t.sql<{ id: string }>('SELECT id FROM customers WHERE brand_id = $1 ORDER BY id DESC LIMIT 1', [brand.brandId]);
    return row!.id;
  };
  const makeOld = (id: string, c: { email: string; phone?: string; name?: string }, cipher = keys.pii) =>
    t.sql('UPDATE customers SET name_encrypted = $1, email_encrypted = $2, phone_encrypted = $3, email_hash = $4, phone_hash = $5, pii_v = 1 WHERE id = $6', [
      c.name ? cipher.encryptUnbound(c.name, 'customer.name') : null,
      cipher.encryptUnbound(c.email, 'customer.email'),
      c.phone ? cipher.encryptUnbound(c.phone, 'customer.phone') : null,
      oldBlindIndex('email', c.email),
      c.phone ? oldBlindIndex('phone', c.phone) : null,
      id,
    ]);
  const ca = await newCustomer(a, 'shared@example.com', '01711222333', 'Old Name A');
  await makeOld(ca, { email: 'shared@example.com', phone: '+8801711222333', name: 'Old Name A' });
  const cb = await newCustomer(b, 'shared@example.com');
  await makeOld(cb, { email: 'shared@example.com' });
  const extra: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = await newCustomer(a, `extra${i}@example.com`);
    await makeOld(id, { email: `extra${i}@example.com` });
    extra.push(id);
  }
  const corrupt = await newCustomer(a, 'corrupt@example.com', undefined, 'Corrupt Name');
  await makeOld(corrupt, { email: 'corrupt@example.com' });
  // A name token under the wrong context: unreadable, left as it is.
  corruptName = v1('Corrupt Name', 'customer.phone');
  await t.sql('UPDATE customers SET name_encrypted = $1 WHERE id = $2', [corruptName, corrupt]);
  const k0 = await newCustomer(a, 'k0@example.com');
  await makeOld(k0, { email: 'k0@example.com' }, new PiiCipher({ activeKeyId: 'k0', keys: { k0: K0 } }));
  customerIds = { a: ca, b: cb, extra, corrupt, k0 };

  // SMS records as the old intake stored them.
  device = await pairDevice(t, { brandId: a.brandId });
  // The service screens forwarded SMS with the brand's filter rules: let these through.
  await updateFilterRules(t.runtime.deps.db, a.brandId, { extraSenders: SMS.map((m) => m.sender), positiveKeywords: [] });
  const res = await deviceRequest(t, device, 'POST', '/sms/messages', {
    messages: SMS.map((m) => ({ device_message_id: m.id, sender: m.sender, body: m.body, received_at: new Date().toISOString() })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  smsIds = res.body.data.map((r: { id: number }) => r.id);
  for (const [i, m] of SMS.entries()) {
    await t.sql('UPDATE sms_records SET sender = $1, body_encrypted = $2, content_hash = $3, parsed_sender_number = $4, pii_v = 1 WHERE id = $5', [
      m.sender,
      v1(m.body, 'sms_record.body'),
      oldContentHash(m.sender, m.body),
      i === 0 ? v1('01711000111', 'sms_record.sender_number') : null,
      smsIds[i],
    ]);
  }

  // A notification with its texts in clear, an outbound SMS and a transaction sender with v1 tokens.
  const n = await t.request('POST', `/api/admin/v1/devices/${device.deviceId}/notifications`, { headers: admin, body: { title: 'Old title', body: 'Old body text' } });
  notificationId = n.body.data.id;
  await t.sql("UPDATE notifications SET title = 'Old title', body = 'Old body text', pii_v = 1 WHERE id = $1", [notificationId]);
  const o = await t.request('POST', `/api/admin/v1/brands/${a.brandId}/outbound-sms`, { headers: admin, body: { phone: '01755444333', message: 'Old outbound' } });
  outboundId = o.body.data.id;
  await t.sql('UPDATE outbound_sms SET phone_encrypted = $1, message_encrypted = $2, pii_v = 1 WHERE id = $3', [v1('+8801755444333', 'outbound_sms.phone'), v1('Old outbound', 'outbound_sms.message'), outboundId]);
  const gateway = await seedGateway(t, 'bkash');
  const seeded = await seedTransaction(t, { apiKey: b.apiKey, gateway, senderNumber: '01866555444' });
  transactionId = seeded.transaction.id;
  await t.sql('UPDATE transactions SET sender_number_encrypted = $1, pii_v = 1 WHERE id = $2', [v1('+8801866555444', 'transaction.sender_number'), transactionId]);
  // One more whose token was tampered with: unreadable, left as it is, counted.
  const other = await seedTransaction(t, { apiKey: b.apiKey, gateway, senderNumber: '01866555445' });
  const parts = v1('+8801866555445', 'transaction.sender_number').split('.');
  parts[4] = (parts[4]!.startsWith('A') ? 'B' : 'A') + parts[4]!.slice(1);
  const tampered = parts.join('.');
  await t.sql('UPDATE transactions SET sender_number_encrypted = $1, pii_v = 1 WHERE id = $2', [tampered, other.transaction.id]);
});
afterAll(() => t?.close());

describe('re-encryption of rows in the old format', () => {
  it('old rows are not served before it runs', async () => {
    const res = await t.request('GET', '/api/v1/customers/shared%40example.com', { token: a.apiKey });
    expect(res.status).toBe(404); // the old index has no brand in it: the lookup misses
    expect((await t.request('GET', `/api/admin/v1/sms-records/${smsIds[0]}`, { headers: admin })).status).toBe(500);
  });

  it('stops at a row whose key is not configured, naming it, with the batches before it committed', async () => {
    const warned: unknown[] = [];
    const logger = { info: () => undefined, warn: (o: unknown) => void warned.push(o) } as unknown as Parameters<typeof reencryptPersonalData>[2];
    await expect(reencryptPersonalData(t.runtime.deps.db, keys, logger, 2)).rejects.toThrow(
      `Cannot re-encrypt customers row ${customerIds.k0}: PII key "k0" is not configured; cannot decrypt`,
    );
    const rows = await t.sql<{ id: string; pii_v: number }>('SELECT id, pii_v FROM customers WHERE id = ANY($1::bigint[]) ORDER BY id', [
      [customerIds.a, customerIds.b, ...customerIds.extra, customerIds.corrupt, customerIds.k0],
    ]);
    // Batches of two in id order: the first three batches committed, the one holding k0 rolled back.
    expect(rows.map((r) => r.pii_v)).toEqual([2, 2, 2, 2, 2, 2, 1]);
    expect(warned).toEqual([]); // the unreadable count is reported when the table finishes
    expect((await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records WHERE pii_v = 1'))[0]!.n).toBe('3');
  });

  it('resumes with the key added and rewrites every old row in the new format', async () => {
    const ring = parseKeyring(t.runtime.deps.secrets.piiEncryptionKeys);
    const withK0: PersonalDataKeys = { pii: new PiiCipher({ activeKeyId: ring.activeKeyId, keys: { ...ring.keys, k0: K0 } }), blindIndexKey: keys.blindIndexKey };
    const report = await reencryptPersonalData(t.runtime.deps.db, withK0, undefined, 2);
    expect(report).toEqual({ rewritten: { customers: 1, sms_records: 3, notifications: 1, outbound_sms: 1, transactions: 2 }, unreadable: { transactions: 1 } });
    for (const table of TABLES) expect((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE pii_v = 1`))[0]!.n, table).toBe('0');

    // Customers: bound tokens, per-brand indexes, found through the API in both brands.
    const [ca] = await t.sql<{ email_hash: string; phone_hash: string; email_encrypted: string }>('SELECT * FROM customers WHERE id = $1', [customerIds.a]);
    const [cb] = await t.sql<{ email_hash: string }>('SELECT * FROM customers WHERE id = $1', [customerIds.b]);
    expect(ca!.email_encrypted).toMatch(/^v2\./);
    expect(ca!.email_hash).toBe(blindIndex(keys.blindIndexKey, a.brandId, 'email', 'shared@example.com'));
    expect(ca!.phone_hash).toBe(blindIndex(keys.blindIndexKey, a.brandId, 'phone', '+8801711222333'));
    expect(cb!.email_hash).toBe(blindIndex(keys.blindIndexKey, b.brandId, 'email', 'shared@example.com'));
    expect(cb!.email_hash).not.toBe(ca!.email_hash);
    const inA = await t.request('GET', '/api/v1/customers/shared%40example.com', { token: a.apiKey });
    expect(inA.body.data).toMatchObject({ email: 'shared@example.com', phone: '+8801711222333', name: 'Old Name A' });
    expect((await t.request('GET', '/api/v1/customers/01711222333', { token: a.apiKey })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/customers/shared%40example.com', { token: b.apiKey })).body.data.email).toBe('shared@example.com');
    expect((await t.request('GET', '/api/v1/customers/k0%40example.com', { token: a.apiKey })).body.data.email).toBe('k0@example.com');
    // The corrupt name was left as it was and stays unreadable (the read fails); its readable email was still moved.
    const [corrupt] = await t.sql<{ name_encrypted: string; email_encrypted: string; pii_v: number }>('SELECT * FROM customers WHERE id = $1', [customerIds.corrupt]);
    expect(corrupt).toMatchObject({ name_encrypted: corruptName, pii_v: 2 });
    expect(corrupt!.email_encrypted).toMatch(/^v2\./);
    expect((await t.request('GET', '/api/v1/customers/corrupt%40example.com', { token: a.apiKey })).status).toBe(500);

    // SMS records: sender and body read back, content hash per brand, duplicates still recognised.
    const one = await t.request('GET', `/api/admin/v1/sms-records/${smsIds[1]}?include=body`, { headers: admin });
    expect(one.body.data).toMatchObject({ sender: SMS[1]!.sender, body: SMS[1]!.body });
    const [rec] = await t.sql<{ sender: string; content_hash: string; parsed_sender_number: string; brand_id: string; device_id: string; device_message_id: string }>(
      'SELECT * FROM sms_records WHERE id = $1',
      [smsIds[0]],
    );
    expect(rec!.sender).toMatch(/^v2\./);
    expect(rec!.content_hash).toBe(smsContentHash(keys.blindIndexKey, a.brandId, SMS[0]!.sender, SMS[0]!.body));
    expect(keys.pii.decrypt(rec!.parsed_sender_number, 'sms_record.sender_number', { brandId: a.brandId, row: `${device.deviceId}:old-1` })).toBe('01711000111');
    const again = await deviceRequest(t, device, 'POST', '/sms/messages', {
      messages: [{ device_message_id: 'again-3', sender: SMS[2]!.sender, body: SMS[2]!.body, received_at: new Date().toISOString() }],
    });
    expect(again.body.data[0]).toMatchObject({ match_status: 'duplicate', duplicate_of: smsIds[2] });

    // Notification, outbound SMS and transaction sender.
    expect((await deviceRequest(t, device, 'GET', '/notifications')).body.data).toEqual([expect.objectContaining({ id: notificationId, title: 'Old title', body: 'Old body text' })]);
    const leased = await deviceRequest(t, device, 'GET', '/sms/queues');
    expect(JSON.stringify(leased.body)).toContain('Old outbound');
    const [tx] = await t.sql<{ sender_number_encrypted: string }>('SELECT sender_number_encrypted FROM transactions WHERE id = $1', [transactionId]);
    const record = await getTransaction(t.runtime.deps.db, transactionId);
    expect(declaredPayerNumber(keys.pii, { ...record, payerNumberEncrypted: tx!.sender_number_encrypted })).toBe('+8801866555444');

    // Nothing of it left in clear.
    for (const table of TABLES) {
      const d = await dump(table);
      for (const s of ['Old title', 'Old body text', '01999000222', 'Private note', 'Old outbound']) expect(d.includes(s), `${table} holds ${s}`).toBe(false);
    }
  });

  it('a second run, through the migration entry point, changes nothing', async () => {
    const before = await Promise.all(TABLES.map(dump));
    let report: unknown;
    const orm = await createOrm({ url: t.runtime.deps.config.DATABASE_URL!, entities, poolMax: 2 });
    try {
      await migrate(orm, [async () => void (report = await reencryptPersonalData(t.runtime.deps.db, keys))]);
    } finally {
      await orm.close();
    }
    expect(report).toEqual({ rewritten: {}, unreadable: {} });
    expect(await Promise.all(TABLES.map(dump))).toEqual(before);
  });
});
