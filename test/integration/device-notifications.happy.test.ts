import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotification } from '../../server/domain/notifications/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const notify = (d: PairedDevice, title: string, body = `${title} body`) =>
  createNotification(t.runtime.deps.db, t.runtime.deps.crypto.pii, { brandId: d.brandId, deviceId: d.deviceId, title, body });

describe('notifications', () => {
  it('lists unread notifications of the device, newest first', async () => {
    const d = await pairDevice(t);
    const other = await pairDevice(t, { brandId: d.brandId });
    const a = await notify(d, 'First');
    const b = await notify(d, 'Second');
    await notify(other, 'Not yours');
    const res = await deviceRequest(t, d, 'GET', '/notifications');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { id: b.id, title: 'Second', body: 'Second body', created_at: b.createdAt.toISOString() },
      { id: a.id, title: 'First', body: 'First body', created_at: a.createdAt.toISOString() },
    ]);
  });

  it('an empty list when nothing is unread', async () => {
    const d = await pairDevice(t);
    const res = await deviceRequest(t, d, 'GET', '/notifications');
    expect(res.body).toEqual({ success: true, data: [] });
  });

  it('acknowledging marks them read, counts each once, and they leave the unread list', async () => {
    const d = await pairDevice(t);
    const a = await notify(d, 'A');
    const b = await notify(d, 'B');
    const c = await notify(d, 'C');
    const res = await deviceRequest(t, d, 'POST', '/notifications/acknowledgements', { ids: [a.id, b.id, a.id] });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ acknowledged: 2 });
    expect((await deviceRequest(t, d, 'GET', '/notifications')).body.data.map((n: any) => n.id)).toEqual([c.id]);
    // Again: already read, so nothing more is marked.
    expect((await deviceRequest(t, d, 'POST', '/notifications/acknowledgements', { ids: [a.id, b.id] })).body.data).toEqual({ acknowledged: 0 });
    const rows = await t.sql<any>('SELECT id, read_at IS NOT NULL AS read FROM notifications WHERE device_id = $1 ORDER BY id', [d.deviceId]);
    expect(rows).toEqual([
      { id: String(a.id), read: true },
      { id: String(b.id), read: true },
      { id: String(c.id), read: false },
    ]);
  });

  it('the dashboard counts unread notifications of this device only', async () => {
    const d = await pairDevice(t);
    const other = await pairDevice(t, { brandId: d.brandId });
    const a = await notify(d, 'A');
    await notify(d, 'B');
    await notify(other, 'C');
    expect((await deviceRequest(t, d, 'GET', '/dashboard')).body.data.unread_notifications).toBe(2);
    await deviceRequest(t, d, 'POST', '/notifications/acknowledgements', { ids: [a.id] });
    expect((await deviceRequest(t, d, 'GET', '/dashboard')).body.data.unread_notifications).toBe(1);
  });
});
