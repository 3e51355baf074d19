import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueOutboundSms, expireOutboundSms, reapExpiredLeases } from '../../server/domain/outbound-sms/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  // The sweeps are called directly below; the scheduled ones must not run in between.
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const em = () => t.runtime.deps.db;
const enqueue = (brandId: number, message: string, opts: { deviceId?: number; phone?: string; ttlMinutes?: number } = {}) =>
  enqueueOutboundSms(em(), t.runtime.deps.crypto.pii, { brandId, phone: opts.phone ?? '01712345678', message, deviceId: opts.deviceId, ttlMinutes: opts.ttlMinutes });
const poll = (d: PairedDevice) => deviceRequest(t, d, 'GET', '/sms/queues');
const report = (d: PairedDevice, id: number, body: unknown) => deviceRequest(t, d, 'POST', `/sms/queues/${id}/reports`, body);

describe('GET sms/queues', () => {
  it('hands out waiting items oldest first, decrypted, and leases them to the caller', async () => {
    const d = await pairDevice(t);
    const first = await enqueue(d.brandId, 'Your order 1 shipped', { phone: '+8801712345678' });
    const second = await enqueue(d.brandId, 'Your order 2 shipped', { phone: '01812345678' });
    const before = Date.now();
    const res = await poll(d);
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: any) => ({ id: i.id, phone: i.phone, message: i.message, status: i.status }))).toEqual([
      { id: first.id, phone: '+8801712345678', message: 'Your order 1 shipped', status: 'pending' },
      { id: second.id, phone: '+8801812345678', message: 'Your order 2 shipped', status: 'pending' },
    ]);
    const item = res.body.data[0];
    expect(Object.keys(item).sort()).toEqual(['created_at', 'expires_at', 'id', 'lease_expires_at', 'message', 'phone', 'status']);
    const leaseMs = Date.parse(item.lease_expires_at) - before;
    expect(leaseMs).toBeGreaterThan(9 * 60_000);
    expect(leaseMs).toBeLessThan(11 * 60_000);
    expect(item.expires_at).toBe(first.expiresAt.toISOString());

    const rows = await t.sql<any>('SELECT id, status, leased_by_device_id, attempts FROM outbound_sms WHERE brand_id = $1 ORDER BY id', [d.brandId]);
    expect(rows).toEqual([
      { id: String(first.id), status: 'leased', leased_by_device_id: String(d.deviceId), attempts: 1 },
      { id: String(second.id), status: 'leased', leased_by_device_id: String(d.deviceId), attempts: 1 },
    ]);
    // Leased items are not handed out again.
    expect((await poll(d)).body.data).toEqual([]);
  });

  it('stores destination and text encrypted', async () => {
    const d = await pairDevice(t);
    await enqueue(d.brandId, 'Secret shipping code 4711', { phone: '01912345678' });
    const dump = JSON.stringify(await t.sql('SELECT * FROM outbound_sms WHERE brand_id = $1', [d.brandId]));
    expect(dump).not.toContain('4711');
    expect(dump).not.toContain('1912345678');
  });

  it('gives a device its own items and items for any device, never another device or brand', async () => {
    const d = await pairDevice(t);
    const sibling = await pairDevice(t, { brandId: d.brandId });
    const stranger = await pairDevice(t);
    const forAny = await enqueue(d.brandId, 'any');
    const forMe = await enqueue(d.brandId, 'me', { deviceId: d.deviceId });
    await enqueue(d.brandId, 'sibling', { deviceId: sibling.deviceId });
    await enqueue(stranger.brandId, 'stranger');
    expect((await poll(d)).body.data.map((i: any) => i.id)).toEqual([forAny.id, forMe.id]);
    expect((await poll(sibling)).body.data.map((i: any) => i.message)).toEqual(['sibling']);
  });

  it('caps one read at 20, oldest first; the rest come on the next read', async () => {
    const d = await pairDevice(t);
    const ids: number[] = [];
    for (let i = 0; i < 25; i++) ids.push((await enqueue(d.brandId, `message ${i}`)).id);
    const first = await poll(d);
    expect(first.body.data.map((i: any) => i.id)).toEqual(ids.slice(0, 20));
    const second = await poll(d);
    expect(second.body.data.map((i: any) => i.id)).toEqual(ids.slice(20));
  });

  it('two devices polling at once never receive the same item', async () => {
    const a = await pairDevice(t);
    const devices = [a, await pairDevice(t, { brandId: a.brandId }), await pairDevice(t, { brandId: a.brandId })];
    const ids: number[] = [];
    for (let i = 0; i < 45; i++) ids.push((await enqueue(a.brandId, `bulk ${i}`)).id);
    for (let round = 0; round < 3; round++) {
      await t.sql("UPDATE outbound_sms SET status = 'pending', leased_by_device_id = NULL, lease_expires_at = NULL WHERE brand_id = $1", [a.brandId]);
      const results = await Promise.all(devices.map((d) => poll(d)));
      const got = results.flatMap((r) => r.body.data.map((i: any) => i.id as number));
      expect(results.every((r) => r.status === 200 && r.body.data.length <= 20)).toBe(true);
      expect(new Set(got).size).toBe(got.length);
      expect(got.sort((x, y) => x - y)).toEqual(ids);
      // Who holds what in the database agrees with who was told.
      for (const [i, d] of devices.entries()) {
        const held = await t.sql<{ id: string }>('SELECT id FROM outbound_sms WHERE leased_by_device_id = $1 ORDER BY id', [d.deviceId]);
        expect(held.map((r) => Number(r.id))).toEqual(results[i]!.body.data.map((x: any) => x.id).sort((x: number, y: number) => x - y));
      }
    }
  });

  it('does not hand out items past their time to live', async () => {
    const d = await pairDevice(t);
    const stale = await enqueue(d.brandId, 'stale');
    const fresh = await enqueue(d.brandId, 'fresh');
    await t.sql("UPDATE outbound_sms SET expires_at = now() - interval '1 second' WHERE id = $1", [stale.id]);
    expect((await poll(d)).body.data.map((i: any) => i.id)).toEqual([fresh.id]);
  });
});

describe('POST sms/queues/{id}/reports', () => {
  it('sent, then delivered; repeating a report answers the current state', async () => {
    const d = await pairDevice(t);
    const { id } = await enqueue(d.brandId, 'hello');
    await poll(d);
    const sent = await report(d, id, { status: 'sent' });
    expect(sent.status).toBe(200);
    expect(sent.body.data).toMatchObject({ id, status: 'sent', delivered_at: null, failed_at: null, failure_reason: null });
    expect(sent.body.data.sent_at).toMatch(/Z$/);
    const again = await report(d, id, { status: 'sent' });
    expect(again.body.data).toEqual(sent.body.data);
    const delivered = await report(d, id, { status: 'delivered' });
    expect(delivered.body.data).toMatchObject({ id, status: 'delivered', sent_at: sent.body.data.sent_at });
    expect(delivered.body.data.delivered_at).toMatch(/Z$/);
    expect((await report(d, id, { status: 'delivered' })).body.data.status).toBe('delivered');
    expect((await report(d, id, { status: 'sent' })).body.data.status).toBe('delivered');
  });

  it('failed with a reason', async () => {
    const d = await pairDevice(t);
    const { id } = await enqueue(d.brandId, 'hello');
    await poll(d);
    const res = await report(d, id, { status: 'failed', reason: '  No SIM credit ' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, status: 'failed', failure_reason: 'No SIM credit', sent_at: null });
    const [row] = await t.sql<any>('SELECT status, failure_reason, lease_expires_at FROM outbound_sms WHERE id = $1', [id]);
    expect(row).toEqual({ status: 'failed', failure_reason: 'No SIM credit', lease_expires_at: null });
  });

  it('delivered straight from leased also records it as sent', async () => {
    const d = await pairDevice(t);
    const { id } = await enqueue(d.brandId, 'hello');
    await poll(d);
    const res = await report(d, id, { status: 'delivered' });
    expect(res.body.data.status).toBe('delivered');
    expect(res.body.data.sent_at).not.toBeNull();
  });
});

describe('lease reaper and time-to-live', () => {
  it('an unreported lease goes back to pending and to another device; the first device can no longer report', async () => {
    const a = await pairDevice(t);
    const b = await pairDevice(t, { brandId: a.brandId });
    const { id } = await enqueue(a.brandId, 'hello');
    expect((await poll(a)).body.data.map((i: any) => i.id)).toEqual([id]);
    expect(await reapExpiredLeases(em())).toBe(0);
    await t.sql("UPDATE outbound_sms SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    expect(await reapExpiredLeases(em())).toBe(1);
    expect(await reapExpiredLeases(em())).toBe(0);
    const [row] = await t.sql<any>('SELECT status, lease_expires_at FROM outbound_sms WHERE id = $1', [id]);
    expect(row).toEqual({ status: 'pending', lease_expires_at: null });
    const second = await poll(b);
    expect(second.body.data.map((i: any) => i.id)).toEqual([id]);
    expect((await t.sql<any>('SELECT attempts FROM outbound_sms WHERE id = $1', [id]))[0].attempts).toBe(2);
    expect((await report(a, id, { status: 'sent' })).status).toBe(404);
    expect((await report(b, id, { status: 'sent' })).body.data.status).toBe('sent');
  });

  it('a late report from the last holder, before anyone else took the item, is recorded', async () => {
    const d = await pairDevice(t);
    const { id } = await enqueue(d.brandId, 'hello');
    await poll(d);
    await t.sql("UPDATE outbound_sms SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    await reapExpiredLeases(em());
    expect((await report(d, id, { status: 'sent' })).body.data.status).toBe('sent');
  });

  it('waiting items past their time to live become expired; leased ones wait for their lease', async () => {
    // The sweeps are service-wide: clear what earlier tests left so the counts below are this test's.
    await expireOutboundSms(em());
    await reapExpiredLeases(em());
    const d = await pairDevice(t);
    const waiting = await enqueue(d.brandId, 'waiting');
    await t.sql("UPDATE outbound_sms SET expires_at = now() - interval '1 second' WHERE id = $1", [waiting.id]);
    const leased = await enqueue(d.brandId, 'leased');
    await poll(d);
    await t.sql("UPDATE outbound_sms SET expires_at = now() - interval '1 second' WHERE id = $1", [leased.id]);
    expect(await expireOutboundSms(em())).toBe(1);
    const rows = await t.sql<any>('SELECT id, status, expired_at IS NOT NULL AS has_expired_at FROM outbound_sms WHERE id = ANY($1) ORDER BY id', [[waiting.id, leased.id]]);
    expect(rows).toEqual([
      { id: String(waiting.id), status: 'expired', has_expired_at: true },
      { id: String(leased.id), status: 'leased', has_expired_at: false },
    ]);
    await t.sql("UPDATE outbound_sms SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [leased.id]);
    await reapExpiredLeases(em());
    expect(await expireOutboundSms(em())).toBe(1);
    expect((await t.sql<any>('SELECT status FROM outbound_sms WHERE id = $1', [leased.id]))[0].status).toBe('expired');
    expect(await expireOutboundSms(em())).toBe(0);
  });
});
