import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { adminRequest } from './admin-support.ts';

/** Phone diagnostics (README, "Phone diagnostics"): what the app reports about what breaks forwarding. */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const heartbeat = (d: Awaited<ReturnType<typeof pairDevice>>, body: Record<string, unknown>) => deviceRequest(t, d, 'POST', '/devices/heartbeats', body);
const diagnostics = async (deviceId: number) => (await adminRequest(t, 'GET', `/devices/${deviceId}`)).body.data.diagnostics;
const alertsOf = (brandId: number) => t.sql<{ id: string; subject: string }>("SELECT id, subject FROM alerts WHERE brand_id = $1 AND type = 'device_cannot_receive_sms' ORDER BY id", [brandId]);

describe('phone diagnostics', () => {
  it('unknown until the app reports; ok; at risk with battery optimisation on; cannot receive without the SMS permission, alerted once per episode', async () => {
    const d = await pairDevice(t, { name: 'Counter phone' });
    expect(await diagnostics(d.deviceId)).toEqual({ health: 'unknown', problems: [], sms_permission: null, battery_optimization_ignored: null, last_sms_seen_at: null });

    const seen = '2026-11-28T08:15:00.000Z';
    expect((await heartbeat(d, { sms_permission: true, battery_optimization_ignored: true, last_sms_seen_at: seen, app_version: '3.1.0' })).status).toBe(200);
    expect(await diagnostics(d.deviceId)).toEqual({ health: 'ok', problems: [], sms_permission: true, battery_optimization_ignored: true, last_sms_seen_at: seen });

    await heartbeat(d, { battery_optimization_ignored: false });
    const risk = await diagnostics(d.deviceId);
    expect(risk).toMatchObject({ health: 'at_risk', sms_permission: true, battery_optimization_ignored: false });
    expect(risk.problems[0]).toMatch(/Battery optimisation is on/);
    // A heartbeat without the fields keeps what was reported.
    await heartbeat(d, { battery_level: 55 });
    expect((await diagnostics(d.deviceId)).health).toBe('at_risk');

    await heartbeat(d, { sms_permission: false });
    expect(await diagnostics(d.deviceId)).toMatchObject({ health: 'cannot_receive', sms_permission: false });
    await heartbeat(d, { sms_permission: false });
    const alerts = await alertsOf(d.brandId);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.subject).toBe('Device "Counter phone" cannot receive SMS: the app has no SMS permission');

    // Granted again, then lost again: a new episode.
    await heartbeat(d, { sms_permission: true, battery_optimization_ignored: true });
    expect((await diagnostics(d.deviceId)).health).toBe('ok');
    await heartbeat(d, { sms_permission: false });
    expect(await alertsOf(d.brandId)).toHaveLength(2);
  });

  it('refuses values of the wrong type with a 400 naming the field, and stores nothing of that heartbeat', async () => {
    const d = await pairDevice(t);
    for (const [body, field] of [
      [{ sms_permission: 'yes' }, 'sms_permission'],
      [{ battery_optimization_ignored: 1 }, 'battery_optimization_ignored'],
      [{ last_sms_seen_at: 'yesterday' }, 'last_sms_seen_at'],
    ] as const) {
      const res = await heartbeat(d, body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
    expect(await diagnostics(d.deviceId)).toMatchObject({ health: 'unknown', sms_permission: null });
    expect(await alertsOf(d.brandId)).toEqual([]);
  });
});
