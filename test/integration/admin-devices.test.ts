import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, deviceRequest, newFingerprint, pairDevice } from '../support/device.ts';
import { adminRequest, auditCount, auditRows } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('pairing codes', () => {
  it('create shows the code once with its expiry; it pairs one phone of that brand', async () => {
    const { brandId } = await t.createBrand('Pairing Brand');
    const res = await adminRequest(t, 'POST', `/brands/${brandId}/pairing-codes`, { ttl_minutes: 30 });
    expect(res.status).toBe(201);
    const code = res.body.data;
    expect(code).toEqual({ id: expect.any(Number), brand_id: brandId, mode: 'live', code: expect.stringMatching(/^[0-9A-Z]{5}-[0-9A-Z]{5}$/), expires_at: expect.stringMatching(ISO) });
    const minutes = (Date.parse(code.expires_at) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(29);
    expect(minutes).toBeLessThanOrEqual(30);
    expect(JSON.stringify(await t.sql('SELECT * FROM pairing_codes WHERE id = $1', [code.id]))).not.toContain(code.code.replace('-', ''));

    const paired = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: code.code, body: { fingerprint: newFingerprint(), device_name: 'Till' } });
    expect(paired.status).toBe(201);
    const again = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: code.code, body: { fingerprint: newFingerprint(), device_name: 'Second' } });
    expect(again.status).toBe(401);
    // No body: the default 15 minutes.
    const plain = await adminRequest(t, 'POST', `/brands/${brandId}/pairing-codes`);
    expect(plain.status).toBe(201);
    expect(Math.round((Date.parse(plain.body.data.expires_at) - Date.now()) / 60_000)).toBe(15);
  });

  it('bad ttl: 400 naming ttl_minutes; unknown brand: 404; nothing created', async () => {
    const { brandId } = await t.createBrand('Bad Pairing Brand');
    for (const body of [{ ttl_minutes: 0 }, { ttl_minutes: 10_081 }, { ttl_minutes: 1.5 }, { ttl_minutes: '15' }]) {
      const res = await adminRequest(t, 'POST', `/brands/${brandId}/pairing-codes`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].field).toBe('ttl_minutes');
    }
    const unknown = await adminRequest(t, 'POST', '/brands/999999/pairing-codes', {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].code).toBe('BRAND_NOT_FOUND');
    expect(await t.sql('SELECT id FROM pairing_codes WHERE brand_id = $1', [brandId])).toEqual([]);
  });
});

describe('devices', () => {
  it('list shows presence now (online, offline, revoked), heartbeat details; filter by brand and presence; get one', async () => {
    const { brandId } = await t.createBrand('Fleet Brand');
    const live = await pairDevice(t, { brandId, name: 'Live phone' });
    const silent = await pairDevice(t, { brandId, name: 'Silent phone' });
    await deviceRequest(t, live, 'POST', '/devices/heartbeats', { battery_level: 80, is_charging: true, network: 'wifi' });
    await t.sql("UPDATE devices SET last_seen_at = now() - interval '2 hours', paired_at = now() - interval '3 hours' WHERE id = $1", [silent.deviceId]);

    const list = await adminRequest(t, 'GET', `/devices?brand_id=${brandId}`);
    expect(list.status).toBe(200);
    expect(list.body.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 });
    const byName = Object.fromEntries(list.body.data.map((d: { name: string }) => [d.name, d]));
    expect(byName['Live phone']).toEqual({
      id: live.deviceId,
      uuid: live.deviceUuid,
      brand_id: brandId,
      mode: 'live',
      name: 'Live phone',
      status: 'active',
      presence: 'online',
      last_seen_at: expect.stringMatching(ISO),
      last_heartbeat_at: expect.stringMatching(ISO),
      offline_since: null,
      battery_level: 80,
      is_charging: true,
      network: 'wifi',
      app_version: '1.0.0',
      diagnostics: { health: 'unknown', problems: [], sms_permission: null, battery_optimization_ignored: null, last_sms_seen_at: null },
      protocol: 'native',
      paired_at: expect.stringMatching(ISO),
      revoked_at: null,
      revoked_reason: null,
    });
    expect(byName['Silent phone'].presence).toBe('offline');
    expect((await adminRequest(t, 'GET', `/devices?brand_id=${brandId}&presence=offline`)).body.data.map((d: { id: number }) => d.id)).toEqual([silent.deviceId]);
    expect((await adminRequest(t, 'GET', `/devices/${live.deviceId}`)).body.data).toEqual(byName['Live phone']);

    // The threshold is the setting: a longer one makes the silent phone online again.
    await adminRequest(t, 'PATCH', '/settings', { device_offline_minutes: 240 });
    expect((await adminRequest(t, 'GET', `/devices/${silent.deviceId}`)).body.data.presence).toBe('online');
    await adminRequest(t, 'PATCH', '/settings', { device_offline_minutes: 60 });
  });

  it('revoke: its token stops working at once; a repeat changes nothing; audited once', async () => {
    const device = await pairDevice(t);
    expect((await deviceRequest(t, device, 'GET', '/dashboard')).status).toBe(200);
    const res = await adminRequest(t, 'POST', `/devices/${device.deviceId}/revocations`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: device.deviceId, status: 'revoked', presence: 'revoked', revoked_reason: 'admin', revoked_at: expect.stringMatching(ISO) });
    expect((await deviceRequest(t, device, 'GET', '/dashboard')).status).toBe(401);
    const refresh = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: device.refreshToken, fingerprint: device.fingerprint } });
    expect(refresh.status).toBe(401);
    expect((await adminRequest(t, 'POST', `/devices/${device.deviceId}/revocations`, {})).body.data.revoked_at).toBe(res.body.data.revoked_at);
    expect((await auditRows(t, 'device.revoke')).filter((r) => r.target_id === String(device.deviceId)).map((r) => [r.brand_id, r.before, r.after])).toEqual([
      [String(device.brandId), { status: 'active' }, { status: 'revoked' }],
    ]);
  });

  it('errors: unknown device 404, bad ids and filters 400', async () => {
    for (const [method, path] of [['GET', '/devices/999999'], ['POST', '/devices/999999/revocations']] as const) {
      const res = await adminRequest(t, method, path);
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('DEVICE_NOT_FOUND');
    }
    for (const [path, field] of [['/devices/x', 'device_id'], ['/devices?presence=asleep', 'presence'], ['/devices?brand_id=0', 'brand_id'], ['/devices?page=0', 'page'], ['/devices?sort=name', 'sort']]) {
      const res = await adminRequest(t, 'GET', path);
      expect(res.status, path).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
  });
});

describe('push notifications', () => {
  it('send to a device; only that device lists it', async () => {
    const { brandId } = await t.createBrand('Notify Brand');
    const target = await pairDevice(t, { brandId });
    const other = await pairDevice(t, { brandId });
    const res = await adminRequest(t, 'POST', `/devices/${target.deviceId}/notifications`, { title: ' Daily close ', body: 'Please forward all SMS before 18:00.' });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ id: expect.any(Number), device_id: target.deviceId, title: 'Daily close', body: 'Please forward all SMS before 18:00.', created_at: expect.stringMatching(ISO) });
    const listed = await deviceRequest(t, target, 'GET', '/notifications');
    expect(listed.body.data.map((n: { id: number }) => n.id)).toEqual([res.body.data.id]);
    expect((await deviceRequest(t, other, 'GET', '/notifications')).body.data).toEqual([]);
  });

  it('errors: empty title or body 400, unknown device 404, nothing stored', async () => {
    const device = await pairDevice(t);
    const audits = await auditCount(t);
    for (const [body, field] of [
      [{ title: '', body: 'x' }, 'title'],
      [{ title: 'x' }, 'body'],
      [{ title: 'x', body: 'y'.repeat(2001) }, 'body'],
      [{ title: 'x', body: 'y', priority: 'high' }, 'priority'],
    ] as const) {
      const res = await adminRequest(t, 'POST', `/devices/${device.deviceId}/notifications`, body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    const missing = await adminRequest(t, 'POST', '/devices/999999/notifications', { title: 'x', body: 'y' });
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0].code).toBe('DEVICE_NOT_FOUND');
    expect(await t.sql('SELECT id FROM notifications WHERE device_id = $1', [device.deviceId])).toEqual([]);
    expect(await auditCount(t)).toBe(audits);
  });
});

describe('outbound SMS', () => {
  it('enqueue for the brand (any phone) or for one device; the phones lease what is theirs', async () => {
    const { brandId } = await t.createBrand('Outbound Brand');
    const a = await pairDevice(t, { brandId });
    const b = await pairDevice(t, { brandId });
    const anyPhone = await adminRequest(t, 'POST', `/brands/${brandId}/outbound-sms`, { phone: '01712345678', message: 'Your order is ready' });
    expect(anyPhone.status).toBe(201);
    expect(anyPhone.body.data).toEqual({ id: expect.any(Number), brand_id: brandId, device_id: null, status: 'pending', expires_at: expect.stringMatching(ISO) });
    const forB = await adminRequest(t, 'POST', `/brands/${brandId}/outbound-sms`, { phone: '+8801812345678', message: 'Only B sends this', device_id: b.deviceId, ttl_minutes: 5 });
    expect(forB.body.data.device_id).toBe(b.deviceId);
    expect(Math.round((Date.parse(forB.body.data.expires_at) - Date.now()) / 60_000)).toBe(5);

    const leasedByA = (await deviceRequest(t, a, 'GET', '/sms/queues')).body.data;
    expect(leasedByA.map((i: { id: number; phone: string; message: string }) => [i.id, i.phone, i.message])).toEqual([[anyPhone.body.data.id, '+8801712345678', 'Your order is ready']]);
    const leasedByB = (await deviceRequest(t, b, 'GET', '/sms/queues')).body.data;
    expect(leasedByB.map((i: { id: number }) => i.id)).toEqual([forB.body.data.id]);
    const [stored] = await t.sql<Record<string, string>>('SELECT * FROM outbound_sms WHERE id = $1', [anyPhone.body.data.id]);
    expect(JSON.stringify(stored)).not.toMatch(/01712345678|order is ready/);
  });

  it('errors: bad phone or message 400, another brand’s or a revoked device 404, unknown brand 404; nothing queued', async () => {
    const { brandId } = await t.createBrand('Bad Outbound Brand');
    const foreign = await pairDevice(t);
    const revoked = await pairDevice(t, { brandId });
    await adminRequest(t, 'POST', `/devices/${revoked.deviceId}/revocations`);
    for (const [body, field] of [
      [{ phone: 'call me', message: 'x' }, 'phone'],
      [{ phone: '01712345678', message: '' }, 'message'],
      [{ phone: '01712345678', message: 'x', ttl_minutes: 0 }, 'ttl_minutes'],
      [{ phone: '01712345678', message: 'x', device_id: 'b' }, 'device_id'],
      [{ phone: '01712345678', message: 'x', sender_id: 'bKash' }, 'sender_id'],
    ] as const) {
      const res = await adminRequest(t, 'POST', `/brands/${brandId}/outbound-sms`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    for (const deviceId of [foreign.deviceId, revoked.deviceId, 999999]) {
      const res = await adminRequest(t, 'POST', `/brands/${brandId}/outbound-sms`, { phone: '01712345678', message: 'x', device_id: deviceId });
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('DEVICE_NOT_FOUND');
    }
    const unknown = await adminRequest(t, 'POST', '/brands/999999/outbound-sms', { phone: '01712345678', message: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].code).toBe('BRAND_NOT_FOUND');
    expect(await t.sql('SELECT id FROM outbound_sms WHERE brand_id = $1', [brandId])).toEqual([]);
  });
});
