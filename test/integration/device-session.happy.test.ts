import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, deviceRequest, newFingerprint, newPairingCode, pairDevice } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('pairing', () => {
  it('exchanges a one-time code for a device and a token pair', async () => {
    const { brandId } = await t.createBrand('Pairing Brand');
    const code = await newPairingCode(t, brandId);
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
    const fingerprint = newFingerprint();
    const res = await t.request('POST', `${DEVICE_API}/devices/pairings`, {
      token: code,
      body: { fingerprint, device_name: 'Counter phone', app_version: '2.3.1' },
    });
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual(['access_token', 'device_id', 'expires_in', 'refresh_expires_in', 'refresh_token', 'server_time', 'token_type']);
    expect(data).toMatchObject({ token_type: 'Bearer', expires_in: 86400, refresh_expires_in: 2592000 });
    expect(data.device_id).toMatch(UUID_RE);
    expect(data.server_time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const access = jwt.decode(data.access_token, { complete: true })!;
    const refresh = jwt.decode(data.refresh_token, { complete: true })!;
    expect(access.header.alg).toBe('HS256');
    expect(access.payload).toMatchObject({ typ: 'access', sub: data.device_id });
    expect(refresh.payload).toMatchObject({ typ: 'refresh', sub: data.device_id });
    const ap = access.payload as jwt.JwtPayload;
    const rp = refresh.payload as jwt.JwtPayload;
    expect(ap.exp! - ap.iat!).toBe(86400);
    expect(rp.exp! - rp.iat!).toBe(30 * 86400);
    expect(ap.jti).not.toBe(rp.jti);

    const [device] = await t.sql<any>('SELECT * FROM devices WHERE uuid = $1', [data.device_id]);
    expect(device).toMatchObject({ brand_id: String(brandId), name: 'Counter phone', app_version: '2.3.1', status: 'active', online: true, refresh_jti: rp.jti });
    expect(device.fingerprint_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(device.fingerprint_hash).not.toBe(fingerprint);
    expect(device.last_seen_at).not.toBeNull();
    const [pc] = await t.sql<any>('SELECT used_at, used_by_device_id FROM pairing_codes WHERE brand_id = $1', [brandId]);
    expect(pc.used_at).not.toBeNull();
    expect(pc.used_by_device_id).toBe(device.id);

    // The access token works on the device API.
    expect((await deviceRequest(t, { accessToken: data.access_token }, 'POST', '/devices/heartbeats')).status).toBe(200);
  });

  it('reads the code forgivingly: lower case, no dash, O for 0 and I/L for 1', async () => {
    const { brandId } = await t.createBrand();
    const code = await newPairingCode(t, brandId);
    const typed = code.replace('-', '').toLowerCase().replace(/0/g, 'o').replace(/1/g, 'l');
    const res = await t.request('POST', `${DEVICE_API}/devices/pairings`, {
      token: typed,
      body: { fingerprint: newFingerprint(), device_name: 'Phone' },
    });
    expect(res.status).toBe(201);
  });

  it('takes the fingerprint from the X-Device-Fingerprint header', async () => {
    const { brandId } = await t.createBrand();
    const fingerprint = newFingerprint();
    const res = await t.request('POST', `${DEVICE_API}/devices/pairings`, {
      token: await newPairingCode(t, brandId),
      headers: { 'X-Device-Fingerprint': fingerprint },
      body: { device_name: 'Phone' },
    });
    expect(res.status).toBe(201);
    // ...and a refresh with the body fingerprint then matches it.
    const refreshed = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: res.body.data.refresh_token, fingerprint } });
    expect(refreshed.status).toBe(200);
  });

  it('creates codes valid for 15 minutes by default, or the given time', async () => {
    const { brandId } = await t.createBrand();
    await newPairingCode(t, brandId);
    await newPairingCode(t, brandId, 60);
    const rows = await t.sql<{ minutes: string }>(
      'SELECT round(extract(epoch FROM expires_at - created_at) / 60) AS minutes FROM pairing_codes WHERE brand_id = $1 ORDER BY id',
      [brandId],
    );
    expect(rows.map((r) => Number(r.minutes))).toEqual([15, 60]);
  });

  it('pairing the same phone again replaces its previous registration', async () => {
    const first = await pairDevice(t);
    const second = await pairDevice(t, { brandId: first.brandId, fingerprint: first.fingerprint });
    const rows = await t.sql<any>('SELECT uuid, status, revoked_reason FROM devices WHERE brand_id = $1 ORDER BY id', [first.brandId]);
    expect(rows).toEqual([
      { uuid: first.deviceUuid, status: 'revoked', revoked_reason: 're_paired' },
      { uuid: second.deviceUuid, status: 'active', revoked_reason: null },
    ]);
    expect((await deviceRequest(t, first, 'POST', '/devices/heartbeats')).status).toBe(401);
    expect((await deviceRequest(t, second, 'POST', '/devices/heartbeats')).status).toBe(200);
  });

  it('another phone of the same brand keeps its own registration', async () => {
    const first = await pairDevice(t);
    await pairDevice(t, { brandId: first.brandId });
    const rows = await t.sql<any>('SELECT status FROM devices WHERE brand_id = $1 ORDER BY id', [first.brandId]);
    expect(rows.map((r: any) => r.status)).toEqual(['active', 'active']);
  });
});

describe('token refresh', () => {
  it('returns a new pair and rotates the refresh token', async () => {
    const d = await pairDevice(t);
    const res = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: d.refreshToken, fingerprint: d.fingerprint } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ token_type: 'Bearer', expires_in: 86400, refresh_expires_in: 2592000, device_id: d.deviceUuid });
    expect(res.body.data.refresh_token).not.toBe(d.refreshToken);
    expect(res.body.data.access_token).not.toBe(d.accessToken);
    const oldJti = (jwt.decode(d.refreshToken) as jwt.JwtPayload).jti;
    const newJti = (jwt.decode(res.body.data.refresh_token) as jwt.JwtPayload).jti;
    const [device] = await t.sql<any>('SELECT refresh_jti FROM devices WHERE id = $1', [d.deviceId]);
    expect(device.refresh_jti).toBe(newJti);
    const rotated = await t.sql<any>('SELECT jti FROM device_refresh_token_rotations WHERE device_id = $1', [d.deviceId]);
    expect(rotated).toEqual([{ jti: oldJti }]);

    // Both access tokens work (the old one until it expires), and the chain continues.
    expect((await deviceRequest(t, { accessToken: res.body.data.access_token }, 'POST', '/devices/heartbeats')).status).toBe(200);
    const again = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, {
      headers: { 'X-Device-Fingerprint': d.fingerprint },
      body: { refresh_token: res.body.data.refresh_token },
    });
    expect(again.status).toBe(200);
  });
});

describe('heartbeat and presence', () => {
  it('stores last_heartbeat with no body at all', async () => {
    const d = await pairDevice(t);
    await t.sql('UPDATE devices SET last_seen_at = NULL, last_heartbeat_at = NULL WHERE id = $1', [d.deviceId]);
    const before = Date.now();
    const res = await deviceRequest(t, d, 'POST', '/devices/heartbeats');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data)).toEqual(['server_time']);
    expect(Math.abs(Date.parse(res.body.data.server_time) - before)).toBeLessThan(5000);
    const [row] = await t.sql<any>('SELECT last_heartbeat_at, last_seen_at, battery_level FROM devices WHERE id = $1', [d.deviceId]);
    expect(row.last_heartbeat_at).not.toBeNull();
    expect(row.last_seen_at).not.toBeNull();
    expect(row.battery_level).toBeNull();
  });

  it('stores what the app reports and keeps values it leaves out', async () => {
    const d = await pairDevice(t);
    const full = await deviceRequest(t, d, 'POST', '/devices/heartbeats', { battery_level: 87, is_charging: true, network: 'wifi', app_version: '2.0.0' });
    expect(full.status).toBe(200);
    const partial = await deviceRequest(t, d, 'POST', '/devices/heartbeats', { battery_level: 12 });
    expect(partial.status).toBe(200);
    const empty = await deviceRequest(t, d, 'POST', '/devices/heartbeats', {});
    expect(empty.status).toBe(200);
    const [row] = await t.sql<any>('SELECT battery_level, is_charging, network, app_version FROM devices WHERE id = $1', [d.deviceId]);
    expect(row).toEqual({ battery_level: 12, is_charging: true, network: 'wifi', app_version: '2.0.0' });
  });

  it('any authenticated call refreshes last_seen, at most once a minute', async () => {
    const d = await pairDevice(t);
    await t.sql("UPDATE devices SET last_seen_at = now() - interval '10 minutes' WHERE id = $1", [d.deviceId]);
    await deviceRequest(t, d, 'GET', '/config/filter-rules');
    const [first] = await t.sql<any>("SELECT last_seen_at > now() - interval '5 seconds' AS fresh, last_seen_at FROM devices WHERE id = $1", [d.deviceId]);
    expect(first.fresh).toBe(true);
    // Within the minute the stored value is left alone (no write per request).
    await t.sql("UPDATE devices SET last_seen_at = now() - interval '30 seconds' WHERE id = $1", [d.deviceId]);
    const [marked] = await t.sql<any>('SELECT last_seen_at FROM devices WHERE id = $1', [d.deviceId]);
    await deviceRequest(t, d, 'GET', '/config/filter-rules');
    const [after] = await t.sql<any>('SELECT last_seen_at FROM devices WHERE id = $1', [d.deviceId]);
    expect(after.last_seen_at.getTime()).toBe(marked.last_seen_at.getTime());
  });
});
