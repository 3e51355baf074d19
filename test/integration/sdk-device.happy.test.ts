import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newFingerprint, newPairingCode, tokenKeys } from '../support/device.ts';
import { PaycollectDevice, VERSION, type DeviceTokens, type FetchLike } from '../../clients/device/index.ts';
import { signDeviceToken } from '../../server/domain/devices/tokens.ts';

let t: TestContext;
let brandId: number;

beforeAll(async () => {
  t = await startTestServer();
  ({ brandId } = await t.createBrand('Device SDK Brand'));
});
afterAll(() => t?.close());

/** A fetch that records every request's method, path and headers. */
function recordingFetch() {
  const calls: Array<{ method: string; path: string; headers: Headers; body: unknown }> = [];
  const f: FetchLike = (url, init) => {
    calls.push({
      method: String(init.method),
      path: new URL(url).pathname,
      headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    return fetch(url, init);
  };
  return { calls, fetch: f };
}

/** A paired SDK client, with everything it handed to onTokens. */
async function pairedDevice(fingerprint = newFingerprint()) {
  const saved: DeviceTokens[] = [];
  const rec = recordingFetch();
  const device = new PaycollectDevice({ baseUrl: t.baseUrl, fingerprint, onTokens: (p) => void saved.push(p), fetch: rec.fetch });
  const result = await device.pair(await newPairingCode(t, brandId), { device_name: 'Counter phone', app_version: '2.0.0' });
  return { device, saved, calls: rec.calls, result, fingerprint };
}

function deviceUuidOf(accessToken: string): string {
  return JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sub;
}

describe('pairing', () => {
  it('pair(code, details) sends the code and the fingerprint, stores the pair and hands it to onTokens', async () => {
    const { device, saved, calls, result, fingerprint } = await pairedDevice();
    expect(result.token_type).toBe('Bearer');
    expect(result.expires_in).toBe(86_400);
    expect(saved).toEqual([{ accessToken: result.access_token, refreshToken: result.refresh_token }]);
    expect(device.getTokens()).toEqual(saved[0]);
    const [pairCall] = calls;
    expect(pairCall!.path).toBe('/api/mobile/v1/devices/pairings');
    expect(pairCall!.headers.get('authorization')).toMatch(/^Bearer \S+$/);
    expect(pairCall!.headers.get('x-device-fingerprint')).toBe(fingerprint);
    expect(pairCall!.headers.get('x-client')).toBe(`@paycollect/device/${VERSION}`);
    expect(pairCall!.body).toEqual({ fingerprint, device_name: 'Counter phone', app_version: '2.0.0' });

    const [row] = await t.sql<{ name: string; app_version: string }>('SELECT name, app_version FROM devices WHERE uuid = $1', [result.device_id]);
    expect(row).toEqual({ name: 'Counter phone', app_version: '2.0.0' });
  });

  it('then every device route works with the stored access token', async () => {
    const { device, calls } = await pairedDevice();
    const hb = await device.devices.heartbeat({ battery_level: 80, network: 'wifi' });
    expect(Date.parse(hb.server_time)).toBeGreaterThan(Date.now() - 60_000);
    const rules = await device.filterRules.get();
    expect(rules.negative_keywords.length).toBeGreaterThan(0);
    expect(await device.notifications.listUnread()).toEqual([]);
    expect(await device.smsQueue.lease()).toEqual([]);
    const dash = await device.dashboard.get();
    expect(dash.unread_notifications).toBe(0);
    const deviceCalls = calls.slice(1);
    expect(deviceCalls.map((c) => c.headers.get('authorization'))).toEqual(Array(5).fill(`Bearer ${device.getTokens()!.accessToken}`));
    // The fingerprint travels only where it is checked.
    expect(deviceCalls.every((c) => c.headers.get('x-device-fingerprint') === null)).toBe(true);
  });
});

describe('transparent refresh', () => {
  it('ten concurrent calls with an expired access token cause exactly one refresh, then all succeed', async () => {
    const { device, saved, calls } = await pairedDevice();
    const { refreshToken } = device.getTokens()!;
    const expired = signDeviceToken(tokenKeys(t), 'access', deviceUuidOf(saved[0]!.accessToken), new Date(Date.now() - 25 * 3600_000)).token;
    device.setTokens({ accessToken: expired, refreshToken });
    calls.length = 0;

    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => device.devices.heartbeat()),
      ...Array.from({ length: 3 }, () => device.filterRules.get()),
      ...Array.from({ length: 3 }, () => device.notifications.listUnread()),
    ]);
    expect(results).toHaveLength(10);

    const refreshes = calls.filter((c) => c.path === '/api/mobile/v1/devices/token-refreshes');
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]!.body).toEqual({ refresh_token: refreshToken, fingerprint: expect.any(String) });
    expect(saved).toHaveLength(2);
    expect(saved[1]).toEqual(device.getTokens());
    expect(saved[1]!.refreshToken).not.toBe(refreshToken);
    // The expired token was never sent: its exp is read on the device first.
    expect(calls.filter((c) => c.headers.get('authorization') === `Bearer ${expired}`)).toHaveLength(0);
    expect(calls.filter((c) => c.path !== '/api/mobile/v1/devices/token-refreshes').every((c) => c.headers.get('authorization') === `Bearer ${saved[1]!.accessToken}`)).toBe(true);
  });

  it('a 401 on a token the device thought valid refreshes once for all concurrent callers and repeats each call once', async () => {
    const { device, saved, calls } = await pairedDevice();
    const { accessToken, refreshToken } = device.getTokens()!;
    // Same claims, broken signature: only the service can tell it is bad.
    const forged = `${accessToken.slice(0, accessToken.lastIndexOf('.'))}.${'A'.repeat(43)}`;
    device.setTokens({ accessToken: forged, refreshToken });
    calls.length = 0;

    await Promise.all(Array.from({ length: 6 }, () => device.devices.heartbeat()));

    const refreshes = calls.filter((c) => c.path.endsWith('/token-refreshes'));
    const heartbeats = calls.filter((c) => c.path.endsWith('/heartbeats'));
    expect(refreshes).toHaveLength(1);
    expect(heartbeats.filter((c) => c.headers.get('authorization') === `Bearer ${forged}`)).toHaveLength(6);
    expect(heartbeats.filter((c) => c.headers.get('authorization') === `Bearer ${saved[1]!.accessToken}`)).toHaveLength(6);
    expect(saved).toHaveLength(2);
  });

  it('onTokens is awaited before the call that needed the refresh goes on', async () => {
    const order: string[] = [];
    const fingerprint = newFingerprint();
    const device = new PaycollectDevice({
      baseUrl: t.baseUrl,
      fingerprint,
      onTokens: async () => {
        await new Promise((r) => setTimeout(r, 50));
        order.push('stored');
      },
      fetch: (url, init) => {
        order.push(new URL(url).pathname.split('/').pop()!);
        return fetch(url, init);
      },
    });
    await device.pair(await newPairingCode(t, brandId), { device_name: 'p' });
    const tokens = device.getTokens()!;
    device.setTokens({ accessToken: signDeviceToken(tokenKeys(t), 'access', deviceUuidOf(tokens.accessToken), new Date(0)).token, refreshToken: tokens.refreshToken });
    await device.devices.heartbeat();
    expect(order).toEqual(['pairings', 'stored', 'token-refreshes', 'stored', 'heartbeats']);
  });

  it('refresh() can be called directly; concurrent calls share it', async () => {
    const { device, saved } = await pairedDevice();
    const [a, b] = await Promise.all([device.refresh(), device.refresh()]);
    expect(a).toEqual(b);
    expect(saved).toHaveLength(2);
    await device.devices.heartbeat();
  });
});
