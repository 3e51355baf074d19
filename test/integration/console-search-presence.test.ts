import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway, seedTransaction } from '../support/seed.ts';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { detectOfflineDevices, prunePresenceHistory } from '../../server/domain/devices/presence.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { adminRequest } from './admin-support.ts';
import { consoleRequest, newOperator, session, type ConsoleSession } from './console-support.ts';
import { dbChecksum, changedTables } from '../support/db-checksum.ts';

/**
 * The admin payment search by customer e-mail/phone and by any reference, the
 * device presence history, and the brand check of operators' brand lists.
 */

let t: TestContext;
let gateway: GatewayView;
let brandA: number;
let brandB: number;
let keyA: string;
let keyB: string;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ brandId: brandA, apiKey: keyA } = await t.createBrand('Search Brand A'));
  ({ brandId: brandB, apiKey: keyB } = await t.createBrand('Search Brand B'));
  gateway = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

const ids = (body: { data: Array<{ id: number }> }) => body.data.map((r) => r.id).sort((a, b) => a - b);

describe('admin payment search', () => {
  let a1: number;
  let a2: number;
  let b1: number;
  let aRef: string;
  let aPaymentId: string;
  let aGatewayTrx: string;

  beforeAll(async () => {
    // The same person pays at both brands; another customer at brand A.
    const first = await seedTransaction(t, { apiKey: keyA, gateway, status: 'completed', customer: { name: 'Rahim', email: 'Rahim.Uddin@Example.com', phone: '01712345678' } });
    const second = await seedTransaction(t, { apiKey: keyA, gateway, status: 'completed', customer: { email: 'karim@example.com', phone: '+8801812345678' } });
    const third = await seedTransaction(t, { apiKey: keyB, gateway, status: 'awaiting_verification', customer: { email: 'rahim.uddin@example.com', phone: '+8801712345678' } });
    a1 = first.transaction.id;
    a2 = second.transaction.id;
    b1 = third.transaction.id;
    aPaymentId = first.paymentId;
    aGatewayTrx = first.transaction.gatewayTrxId!;
    [{ reference: aRef }] = await t.sql<{ reference: string }>('SELECT i.reference FROM payment_intents i JOIN transactions t ON t.intent_id = i.id WHERE t.id = $1', [a1]);
  });

  it('finds a customer by e-mail in every brand, whatever the case and spaces', async () => {
    const res = await adminRequest(t, 'GET', `/transactions?customer_email=${encodeURIComponent('  RAHIM.uddin@example.COM ')}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ids(res.body)).toEqual([a1, b1].sort((x, y) => x - y));
    expect(res.body.meta.total).toBe(2);
    const one = await adminRequest(t, 'GET', `/transactions?customer_email=karim@example.com`);
    expect(ids(one.body)).toEqual([a2]);
    const none = await adminRequest(t, 'GET', `/transactions?customer_email=nobody@example.com`);
    expect([none.status, none.body.data, none.body.meta.total]).toEqual([200, [], 0]);
  });

  it('finds a customer by phone in national or E.164 form; combines with the other filters', async () => {
    for (const phone of ['01712345678', '+8801712345678', '+880 1712-345678', '8801712345678']) {
      const res = await adminRequest(t, 'GET', `/transactions?customer_phone=${encodeURIComponent(phone)}`);
      expect(res.status, phone).toBe(200);
      expect(ids(res.body), phone).toEqual([a1, b1].sort((x, y) => x - y));
    }
    const ofB = await adminRequest(t, 'GET', `/transactions?customer_phone=01712345678&brand_id=${brandB}`);
    expect(ids(ofB.body)).toEqual([b1]);
    const completed = await adminRequest(t, 'GET', `/transactions?customer_phone=01712345678&status=completed`);
    expect(ids(completed.body)).toEqual([a1]);
    // E-mail and phone together: the payments of a customer having both.
    const both = await adminRequest(t, 'GET', `/transactions?customer_phone=01712345678&customer_email=karim@example.com`);
    expect(both.body.data).toEqual([]);
  });

  it("an operator limited to one brand finds only that brand's payments of the customer", async () => {
    const s = await session(t, (await newOperator(t, 'viewer', { brandIds: [brandA] })).email);
    const res = await consoleRequest(t, s, 'GET', `/transactions?customer_email=rahim.uddin@example.com`);
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([a1]);
    const other = await consoleRequest(t, s, 'GET', `/transactions?customer_email=rahim.uddin@example.com&brand_id=${brandB}`);
    expect([other.status, other.body.data]).toEqual([200, []]);
  });

  it('finds by any reference: service trx id, gateway trx id in any case, payment id, merchant reference', async () => {
    const [{ trx_id: trxId }] = await t.sql<{ trx_id: string }>('SELECT trx_id FROM transactions WHERE id = $1', [a1]);
    for (const ref of [trxId!, aGatewayTrx, aGatewayTrx.toLowerCase(), aPaymentId, aPaymentId.toUpperCase(), aRef!]) {
      const res = await adminRequest(t, 'GET', `/transactions?reference=${encodeURIComponent(ref)}`);
      expect(res.status, ref).toBe(200);
      expect(ids(res.body), ref).toEqual([a1]);
    }
    const none = await adminRequest(t, 'GET', `/transactions?reference=no-such-ref`);
    expect(none.body.meta.total).toBe(0);
    // The older trx_id filter still works.
    expect(ids((await adminRequest(t, 'GET', `/transactions?trx_id=${trxId}`)).body)).toEqual([a1]);
  });

  it('an e-mail or phone that cannot be valid is a 400 naming its parameter', async () => {
    for (const [query, field] of [
      ['customer_email=not-an-email', 'customer_email'],
      ['customer_email=a%40b', 'customer_email'],
      ['customer_phone=12345', 'customer_phone'],
      ['customer_phone=call%20me', 'customer_phone'],
      ['customer_phone=12', 'customer_phone'],
      ['reference=', 'reference'],
    ] as const) {
      const res = await adminRequest(t, 'GET', `/transactions?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.success, query).toBe(false);
      expect(res.body.errors[0], query).toMatchObject({ code: 'VALIDATION_ERROR', field });
      expect(res.body.request_id, query).toEqual(expect.any(String));
    }
  });

  it('needs a caller: 401 without credentials', async () => {
    const res = await t.request('GET', '/api/admin/v1/transactions?customer_email=rahim.uddin@example.com');
    expect(res.status).toBe(401);
    expect(res.body.errors[0].code).toBe('UNAUTHORIZED');
  });
});

describe('device presence history', () => {
  async function sweep() {
    return detectOfflineDevices(t.runtime.deps.db);
  }

  it('records each offline and online change with battery and network, newest first, paginated', async () => {
    const device = await pairDevice(t, { brandId: brandA, name: 'History phone' });
    await deviceRequest(t, device, 'POST', '/devices/heartbeats', { battery_level: 41, is_charging: false, network: 'cellular' });
    expect((await adminRequest(t, 'GET', `/devices/${device.deviceId}/presence-history`)).body).toMatchObject({ data: [], meta: { total: 0 } });
    // Silent for two hours: the sweep marks it offline once.
    await t.sql("UPDATE devices SET last_seen_at = now() - interval '2 hours', paired_at = now() - interval '3 hours' WHERE id = $1", [device.deviceId]);
    expect((await sweep()).wentOffline).toBeGreaterThanOrEqual(1);
    await sweep();
    // Heard from again: online at the next sweep, with what the heartbeat said.
    await deviceRequest(t, device, 'POST', '/devices/heartbeats', { battery_level: 77, is_charging: true, network: 'wifi' });
    expect((await sweep()).cameOnline).toBeGreaterThanOrEqual(1);

    const res = await adminRequest(t, 'GET', `/devices/${device.deviceId}/presence-history`);
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 });
    const [online, offline] = res.body.data;
    expect(online).toMatchObject({ status: 'online', battery_level: 77, is_charging: true, network: 'wifi' });
    expect(offline).toMatchObject({ status: 'offline', battery_level: 41, is_charging: false, network: 'cellular' });
    expect(Date.parse(online.changed_at)).toBeGreaterThanOrEqual(Date.parse(offline.changed_at));
    expect(Date.parse(offline.last_seen_at)).toBeLessThan(Date.now() - 3600_000);
    expect(online.id).toBeGreaterThan(offline.id);

    const page2 = await adminRequest(t, 'GET', `/devices/${device.deviceId}/presence-history?per_page=1&page=2`);
    expect(page2.body.meta).toEqual({ page: 2, per_page: 1, total: 2, total_pages: 2 });
    expect(page2.body.data.map((r: { id: number }) => r.id)).toEqual([offline.id]);
  });

  it('keeps 30 days: the sweep prunes older rows', async () => {
    const device = await pairDevice(t, { brandId: brandA, name: 'Old history phone' });
    await t.sql(
      `INSERT INTO device_presence_changes (device_id, status, changed_at) VALUES ($1, 'offline', now() - interval '31 days'), ($1, 'online', now() - interval '29 days')`,
      [device.deviceId],
    );
    expect(await prunePresenceHistory(t.runtime.deps.db)).toBeGreaterThanOrEqual(1);
    const rows = await t.sql<{ status: string }>('SELECT status FROM device_presence_changes WHERE device_id = $1', [device.deviceId]);
    expect(rows).toEqual([{ status: 'online' }]);
  });

  it("a viewer reads it; another brand's device is 404 like an unknown one; bad paging is 400; no caller is 401", async () => {
    const mine = await pairDevice(t, { brandId: brandA, name: 'Mine' });
    const theirs = await pairDevice(t, { brandId: brandB, name: 'Theirs' });
    const s: ConsoleSession = await session(t, (await newOperator(t, 'viewer', { brandIds: [brandA] })).email);
    const ok = await consoleRequest(t, s, 'GET', `/devices/${mine.deviceId}/presence-history`);
    expect([ok.status, ok.body.success]).toEqual([200, true]);
    for (const path of [`/devices/${theirs.deviceId}/presence-history`, '/devices/999999/presence-history']) {
      const res = await consoleRequest(t, s, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'DEVICE_NOT_FOUND' }] });
    }
    expect((await adminRequest(t, 'GET', '/devices/999999/presence-history')).status).toBe(404);
    for (const query of ['per_page=0', 'per_page=101', 'page=0', 'page=x', 'extra=1']) {
      const res = await adminRequest(t, 'GET', `/devices/${mine.deviceId}/presence-history?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].code, query).toBe('VALIDATION_ERROR');
    }
    const bad = await adminRequest(t, 'GET', '/devices/abc/presence-history');
    expect([bad.status, bad.body.errors[0].field]).toEqual([400, 'device_id']);
    const anon = await t.request('GET', `/api/admin/v1/devices/${mine.deviceId}/presence-history`);
    expect(anon.status).toBe(401);
  });
});

describe("operators' brand lists name existing brands", () => {
  it('create and update with an unknown brand id: 400 naming brand_ids, nothing written', async () => {
    const before = await dbChecksum(t);
    const created = await adminRequest(t, 'POST', '/operators', { email: 'scoped@example.com', name: 'Scoped', role: 'viewer', brand_ids: [brandA, 987654] });
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ success: false, errors: [{ code: 'VALIDATION_ERROR', field: 'brand_ids' }] });
    expect(created.body.errors[0].message).toContain('987654');
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);

    const ok = await adminRequest(t, 'POST', '/operators', { email: 'scoped@example.com', name: 'Scoped', role: 'viewer', brand_ids: [brandA] });
    expect(ok.status).toBe(201);
    const id: string = ok.body.data.operator.id;
    const beforeUpdate = await dbChecksum(t);
    const patched = await adminRequest(t, 'PATCH', `/operators/${id}`, { brand_ids: [brandB, 555555] });
    expect(patched.status).toBe(400);
    expect(patched.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'brand_ids' });
    expect(changedTables(beforeUpdate, await dbChecksum(t))).toEqual([]);
    const good = await adminRequest(t, 'PATCH', `/operators/${id}`, { brand_ids: [brandA, brandB] });
    expect([good.status, good.body.data.brand_ids]).toEqual([200, [brandA, brandB]]);
    // An owner sees every brand: its list is ignored, not checked.
    const owner = await adminRequest(t, 'POST', '/operators', { email: 'owner2@example.com', name: 'Owner Two', role: 'owner', brand_ids: [424242] });
    expect([owner.status, owner.body.data.operator.brand_ids]).toEqual([201, null]);
  });
});
