import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotification } from '../../server/domain/notifications/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const notify = (d: PairedDevice, title: string) => createNotification(t.runtime.deps.db, t.runtime.deps.crypto.pii, { brandId: d.brandId, deviceId: d.deviceId, title, body: 'x' });
const unreadIds = async (d: PairedDevice) =>
  (await t.sql<{ id: string }>('SELECT id FROM notifications WHERE device_id = $1 AND read_at IS NULL ORDER BY id', [d.deviceId])).map((r) => Number(r.id));

describe('acknowledgements are scoped to the calling device', () => {
  it("a device of brand A acknowledging brand B's notification ids: 0 acknowledged, nothing touched", async () => {
    const a = await pairDevice(t);
    const b = await pairDevice(t);
    expect(a.brandId).not.toBe(b.brandId);
    const nb1 = await notify(b, 'B1');
    const nb2 = await notify(b, 'B2');
    const res = await deviceRequest(t, a, 'POST', '/notifications/acknowledgements', { ids: [nb1.id, nb2.id] });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ acknowledged: 0 });
    expect(await unreadIds(b)).toEqual([nb1.id, nb2.id]);
  });

  it("another device of the same brand: the other's ids are neither touched nor counted", async () => {
    const a = await pairDevice(t);
    const sibling = await pairDevice(t, { brandId: a.brandId });
    const mine = await notify(a, 'mine');
    const theirs = await notify(sibling, 'theirs');
    const res = await deviceRequest(t, a, 'POST', '/notifications/acknowledgements', { ids: [mine.id, theirs.id, 999_999_999] });
    expect(res.body.data).toEqual({ acknowledged: 1 });
    expect(await unreadIds(a)).toEqual([]);
    expect(await unreadIds(sibling)).toEqual([theirs.id]);
  });

  it("another device's notifications are not listed", async () => {
    const a = await pairDevice(t);
    const b = await pairDevice(t);
    await notify(b, 'secret title');
    const res = await deviceRequest(t, a, 'GET', '/notifications');
    expect(res.body.data).toEqual([]);
  });
});

describe('acknowledgement input', () => {
  let d: PairedDevice;
  beforeAll(async () => {
    d = await pairDevice(t);
  });

  it.each([
    ['no body', undefined, 'body'],
    ['ids missing', {}, 'ids'],
    ['ids empty', { ids: [] }, 'ids'],
    ['ids not integers', { ids: [1.5] }, 'ids.0'],
    ['ids as strings', { ids: ['1'] }, 'ids.0'],
    ['ids zero', { ids: [0] }, 'ids.0'],
    ['ids negative', { ids: [3, -1] }, 'ids.1'],
    ['unknown field', { ids: [1], all: true }, 'all'],
  ])('%s: 400 VALIDATION_ERROR', async (_name, body, field) => {
    const res = await deviceRequest(t, d, 'POST', '/notifications/acknowledgements', body);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('more than 100 ids: 400 naming ids; exactly 100 is fine', async () => {
    const many = Array.from({ length: 101 }, (_, i) => i + 1);
    const res = await deviceRequest(t, d, 'POST', '/notifications/acknowledgements', { ids: many });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'ids', message: 'At most 100 ids per call' });
    expect((await deviceRequest(t, d, 'POST', '/notifications/acknowledgements', { ids: many.slice(0, 100) })).status).toBe(200);
  });

  it('without a token: 401 UNAUTHORIZED', async () => {
    const res = await t.request('POST', '/api/mobile/v1/notifications/acknowledgements', { body: { ids: [1] } });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].code).toBe('UNAUTHORIZED');
  });
});

describe('createNotification', () => {
  it('needs a device of the given brand', async () => {
    const d = await pairDevice(t);
    const other = await t.createBrand('Other');
    await expect(createNotification(t.runtime.deps.db, t.runtime.deps.crypto.pii, { brandId: other.brandId, deviceId: d.deviceId, title: 'x', body: 'y' })).rejects.toMatchObject({
      code: 'DEVICE_NOT_FOUND',
    });
    await expect(createNotification(t.runtime.deps.db, t.runtime.deps.crypto.pii, { brandId: d.brandId, deviceId: d.deviceId, title: ' ', body: 'y' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      field: 'title',
    });
  });
});
