import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectOfflineDevices, pruneRotatedRefreshTokens } from '../../server/domain/devices/presence.ts';
import { revokeDevice } from '../../server/domain/devices/service.ts';
import { putEndpoint } from '../../server/domain/webhooks/endpoints.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { seedSetting } from '../support/seed.ts';

let t: TestContext;

beforeAll(async () => {
  // The detector is run directly below; the scheduled one must not run in between.
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const detect = () => detectOfflineDevices(t.runtime.deps.db);
const silence = (d: PairedDevice, minutes: number) =>
  t.sql(`UPDATE devices SET last_seen_at = now() - make_interval(mins => $1) WHERE id = $2`, [minutes, d.deviceId]);
const events = async (d: PairedDevice) =>
  (
    await t.sql<{ event: string; brand_id: string; payload: string }>(
      "SELECT event, brand_id, payload FROM webhook_events WHERE event LIKE 'device.%' AND payload::jsonb -> 'data' ->> 'device_uuid' = $1 ORDER BY id",
      [d.deviceUuid],
    )
  ).map((r) => ({ event: r.event, brandId: Number(r.brand_id), data: JSON.parse(r.payload).data }));

describe('offline detector', () => {
  it('raises device.offline once when a device falls silent, and device.online once when it returns', async () => {
    // Clear whatever earlier tests left so the counts below are this test's.
    await detect();
    const d = await pairDevice(t, { name: 'Counter phone' });
    expect(await detect()).toEqual({ wentOffline: 0, cameOnline: 0 });

    await silence(d, 61);
    expect(await detect()).toEqual({ wentOffline: 1, cameOnline: 0 });
    expect(await detect()).toEqual({ wentOffline: 0, cameOnline: 0 });
    const [row] = await t.sql<any>('SELECT online, offline_since IS NOT NULL AS has_since FROM devices WHERE id = $1', [d.deviceId]);
    expect(row).toEqual({ online: false, has_since: true });
    const offline = await events(d);
    expect(offline).toHaveLength(1);
    expect(offline[0]).toMatchObject({ event: 'device.offline', brandId: d.brandId, data: { device_uuid: d.deviceUuid, name: 'Counter phone', status: 'offline' } });
    expect(offline[0]!.data.last_seen_at).toMatch(/Z$/);

    // Any authenticated call is presence.
    expect((await deviceRequest(t, d, 'GET', '/notifications')).status).toBe(200);
    expect(await detect()).toEqual({ wentOffline: 0, cameOnline: 1 });
    expect(await detect()).toEqual({ wentOffline: 0, cameOnline: 0 });
    const all = await events(d);
    expect(all.map((e) => e.event)).toEqual(['device.offline', 'device.online']);
    expect(all[1]!.data.status).toBe('online');
    const [back] = await t.sql<any>('SELECT online, offline_since FROM devices WHERE id = $1', [d.deviceId]);
    expect(back).toEqual({ online: true, offline_since: null });
  });

  it('the threshold is the device_offline_minutes setting (default 60)', async () => {
    await detect();
    const d = await pairDevice(t);
    await silence(d, 30);
    expect(await detect()).toEqual({ wentOffline: 0, cameOnline: 0 });
    await seedSetting(t, 'device_offline_minutes', 20);
    try {
      expect(await detect()).toEqual({ wentOffline: 1, cameOnline: 0 });
    } finally {
      await seedSetting(t, 'device_offline_minutes', 60);
    }
  });

  it('several detectors running at once raise each event once', async () => {
    await detect();
    const devices = [await pairDevice(t), await pairDevice(t), await pairDevice(t)];
    for (const d of devices) await silence(d, 120);
    const runs = await Promise.all([detect(), detect(), detect(), detect()]);
    expect(runs.reduce((n, r) => n + r.wentOffline, 0)).toBe(3);
    for (const d of devices) expect((await events(d)).map((e) => e.event)).toEqual(['device.offline']);
  });

  it('revoked devices are not reported', async () => {
    await detect();
    const d = await pairDevice(t);
    await revokeDevice(t.runtime.deps.db, d.brandId, d.deviceId);
    await silence(d, 120);
    expect(await detect()).toEqual({ wentOffline: 0, cameOnline: 0 });
    expect(await events(d)).toEqual([]);
  });

  it('a brand subscribed to device events gets a delivery for each flip', async () => {
    await detect();
    const d = await pairDevice(t);
    await putEndpoint(
      t.runtime.deps.db,
      t.runtime.deps.crypto.pii,
      { brandId: d.brandId, mode: 'live' },
      { url: 'http://127.0.0.1:9/hooks', events: ['device.offline', 'device.online'], enabled: true },
      { allowPrivate: true },
    );
    await silence(d, 120);
    await detect();
    await deviceRequest(t, d, 'POST', '/devices/heartbeats');
    await detect();
    const deliveries = await t.sql<any>(
      'SELECT e.event FROM webhook_deliveries w JOIN webhook_events e ON e.id = w.event_id WHERE w.brand_id = $1 ORDER BY w.id',
      [d.brandId],
    );
    expect(deliveries.map((r: any) => r.event)).toEqual(['device.offline', 'device.online']);
  });
});

describe('refresh token records', () => {
  it('records of rotated tokens are pruned once those tokens would have expired anyway', async () => {
    const d = await pairDevice(t);
    await t.sql(
      `INSERT INTO device_refresh_token_rotations (jti, device_id, expires_at) VALUES
         ('old-1', $1, now() - interval '1 second'), ('live-1', $1, now() + interval '1 day')`,
      [d.deviceId],
    );
    expect(await pruneRotatedRefreshTokens(t.runtime.deps.db)).toBe(1);
    const rows = await t.sql<any>('SELECT jti FROM device_refresh_token_rotations WHERE device_id = $1', [d.deviceId]);
    expect(rows).toEqual([{ jti: 'live-1' }]);
  });
});
