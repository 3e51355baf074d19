import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

describe('heartbeat input', () => {
  it.each([
    ['battery over 100', { battery_level: 101 }, 'battery_level'],
    ['battery as a string', { battery_level: '50' }, 'battery_level'],
    ['network empty', { network: '' }, 'network'],
    ['unknown field', { gps: [1, 2] }, 'gps'],
  ])('%s: 400 VALIDATION_ERROR', async (_name, body, field) => {
    const d = await pairDevice(t);
    const res = await deviceRequest(t, d, 'POST', '/devices/heartbeats', body);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field });
    const [row] = await t.sql<any>('SELECT last_heartbeat_at FROM devices WHERE id = $1', [d.deviceId]);
    expect(row.last_heartbeat_at).toBeNull();
  });
});
