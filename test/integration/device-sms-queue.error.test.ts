import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueOutboundSms } from '../../server/domain/outbound-sms/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';

let t: TestContext;
let d: PairedDevice;

beforeAll(async () => {
  t = await startTestServer();
  d = await pairDevice(t);
});
afterAll(() => t?.close());

const enqueue = (brandId: number, deviceId?: number) =>
  enqueueOutboundSms(t.runtime.deps.db, t.runtime.deps.crypto.pii, { brandId, phone: '01712345678', message: 'hi', deviceId });
const report = (dev: PairedDevice, id: number | string, body: unknown) => deviceRequest(t, dev, 'POST', `/sms/queues/${id}/reports`, body);

function expectCode(res: { status: number; body: any }, status: number, code: string, field?: string | null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.errors[0].code).toBe(code);
  if (field !== undefined) expect(res.body.errors[0].field).toBe(field);
}

describe('reports on items that are not the caller\'s: 404 SMS_QUEUE_ITEM_NOT_FOUND', () => {
  it('an unknown id', async () => {
    expectCode(await report(d, 987654321, { status: 'sent' }), 404, 'SMS_QUEUE_ITEM_NOT_FOUND', null);
  });

  it('an item still waiting (never handed to anyone)', async () => {
    const { id } = await enqueue(d.brandId);
    expectCode(await report(d, id, { status: 'sent' }), 404, 'SMS_QUEUE_ITEM_NOT_FOUND');
  });

  it("an item leased to another device of the brand, and another brand's item: same answer as unknown, nothing changes", async () => {
    const sibling = await pairDevice(t, { brandId: d.brandId });
    const stranger = await pairDevice(t);
    const mine = await enqueue(d.brandId, sibling.deviceId);
    await deviceRequest(t, sibling, 'GET', '/sms/queues');
    const theirs = await enqueue(stranger.brandId);
    await deviceRequest(t, stranger, 'GET', '/sms/queues');
    const a = await report(d, mine.id, { status: 'failed', reason: 'x' });
    const b = await report(d, theirs.id, { status: 'delivered' });
    expectCode(a, 404, 'SMS_QUEUE_ITEM_NOT_FOUND');
    expectCode(b, 404, 'SMS_QUEUE_ITEM_NOT_FOUND');
    expect(a.body.error).toBe(b.body.error);
    const rows = await t.sql<any>('SELECT status FROM outbound_sms WHERE id = ANY($1)', [[mine.id, theirs.id]]);
    expect(rows.map((r: any) => r.status)).toEqual(['leased', 'leased']);
  });
});

describe('contradicting reports: 409 INVALID_STATE', () => {
  it('delivered after failed, failed after sent', async () => {
    const one = await enqueue(d.brandId);
    const two = await enqueue(d.brandId);
    await deviceRequest(t, d, 'GET', '/sms/queues');
    expect((await report(d, one.id, { status: 'failed', reason: 'radio off' })).status).toBe(200);
    expectCode(await report(d, one.id, { status: 'delivered' }), 409, 'INVALID_STATE');
    expectCode(await report(d, one.id, { status: 'sent' }), 409, 'INVALID_STATE');
    expect((await report(d, two.id, { status: 'sent' })).status).toBe(200);
    expectCode(await report(d, two.id, { status: 'failed', reason: 'late' }), 409, 'INVALID_STATE');
    const rows = await t.sql<any>('SELECT id, status FROM outbound_sms WHERE id = ANY($1) ORDER BY id', [[one.id, two.id]]);
    expect(rows.map((r: any) => r.status)).toEqual(['failed', 'sent']);
  });
});

describe('bad input: 400 VALIDATION_ERROR naming the field', () => {
  it.each([
    ['failed without a reason', { status: 'failed' }, 'reason'],
    ['failed with a blank reason', { status: 'failed', reason: '   ' }, 'reason'],
    ['a reason too long', { status: 'failed', reason: 'x'.repeat(501) }, 'reason'],
    ['an unknown status', { status: 'lost' }, 'status'],
    ['no status', {}, 'status'],
    ['a reason with sent', { status: 'sent', reason: 'x' }, 'reason'],
  ])('%s', async (_name, body, field) => {
    const { id } = await enqueue(d.brandId);
    expectCode(await report(d, id, body), 400, 'VALIDATION_ERROR', field);
  });

  it.each([['abc'], ['0'], ['1.5'], ['-3']])('a path id of %s', async (id) => {
    expectCode(await report(d, id, { status: 'sent' }), 400, 'VALIDATION_ERROR', 'id');
  });

  it('no token: 401 UNAUTHORIZED on both routes', async () => {
    expectCode(await t.request('GET', '/api/mobile/v1/sms/queues'), 401, 'UNAUTHORIZED');
    expectCode(await t.request('POST', '/api/mobile/v1/sms/queues/1/reports', { body: { status: 'sent' } }), 401, 'UNAUTHORIZED');
  });
});

describe('enqueueOutboundSms', () => {
  it('refuses a bad phone, an empty or long message, a bad time to live and a foreign device', async () => {
    const pii = t.runtime.deps.crypto.pii;
    const em = () => t.runtime.deps.db;
    const other = await pairDevice(t);
    await expect(enqueueOutboundSms(em(), pii, { brandId: d.brandId, phone: '12', message: 'x' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', field: 'phone' });
    await expect(enqueueOutboundSms(em(), pii, { brandId: d.brandId, phone: '01712345678', message: ' ' })).rejects.toMatchObject({ field: 'message' });
    await expect(enqueueOutboundSms(em(), pii, { brandId: d.brandId, phone: '01712345678', message: 'x'.repeat(1001) })).rejects.toMatchObject({ field: 'message' });
    await expect(enqueueOutboundSms(em(), pii, { brandId: d.brandId, phone: '01712345678', message: 'x', ttlMinutes: 0 })).rejects.toMatchObject({ field: 'ttl_minutes' });
    await expect(enqueueOutboundSms(em(), pii, { brandId: d.brandId, phone: '01712345678', message: 'x', deviceId: other.deviceId })).rejects.toMatchObject({
      code: 'DEVICE_NOT_FOUND',
    });
  });
});
