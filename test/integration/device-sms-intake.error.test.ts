import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';

let t: TestContext;
let d: PairedDevice;

beforeAll(async () => {
  t = await startTestServer();
  d = await pairDevice(t);
});
afterAll(() => t?.close());

const valid = { device_message_id: 'm-1', sender: 'bKash', body: 'You have received Tk 10.00', received_at: '2026-03-15T08:32:00Z' };
const forward = (body: unknown) => deviceRequest(t, d, 'POST', '/sms/messages', body);

describe('bad input: 400 VALIDATION_ERROR naming the field, nothing stored', () => {
  it.each([
    ['no messages', {}, 'messages'],
    ['an empty batch', { messages: [] }, 'messages'],
    ['an unknown top-level field', { messages: [valid], device: 'x' }, 'device'],
    ['a missing sender', { messages: [{ ...valid, sender: undefined }] }, 'messages.0.sender'],
    ['a blank sender', { messages: [{ ...valid, sender: '  ' }] }, 'messages.0.sender'],
    ['a sender with a control character', { messages: [{ ...valid, sender: 'bK\u0000ash' }] }, 'messages.0.sender'],
    ['a sender too long', { messages: [{ ...valid, sender: 'x'.repeat(65) }] }, 'messages.0.sender'],
    ['an empty body', { messages: [{ ...valid, body: '' }] }, 'messages.0.body'],
    ['a body over 2000 characters', { messages: [{ ...valid, body: 'x'.repeat(2001) }] }, 'messages.0.body'],
    ['a missing message id', { messages: [{ ...valid, device_message_id: undefined }] }, 'messages.0.device_message_id'],
    ['a message id too long', { messages: [{ ...valid, device_message_id: 'x'.repeat(129) }] }, 'messages.0.device_message_id'],
    ['received_at not a timestamp', { messages: [{ ...valid, received_at: 'yesterday' }] }, 'messages.0.received_at'],
    ['received_at as a number', { messages: [{ ...valid, received_at: 1710491520000 }] }, 'messages.0.received_at'],
    ['sim_slot out of range', { messages: [{ ...valid, sim_slot: 8 }] }, 'messages.0.sim_slot'],
    ['an unknown field in a message', { messages: [valid, { ...valid, device_message_id: 'm-2', spam: true }] }, 'messages.1.spam'],
  ])('%s', async (_name, body, field) => {
    const res = await forward(body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors.map((e: any) => e.field)).toContain(field);
    expect(res.body.errors[0].code).toBe('VALIDATION_ERROR');
    expect((await t.sql<any>('SELECT count(*) AS n FROM sms_records'))[0].n).toBe('0');
  });

  it('more than 50 messages: 400 naming messages; 50 is fine', async () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ ...valid, device_message_id: `bulk-${i}`, body: `text ${i}` }));
    const res = await forward({ messages: many });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ field: 'messages', message: 'At most 50 messages per call' });
    expect((await forward({ messages: many.slice(0, 50) })).body.data).toHaveLength(50);
  });

  it('no token: 401 UNAUTHORIZED', async () => {
    const res = await t.request('POST', '/api/mobile/v1/sms/messages', { body: { messages: [valid] } });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].code).toBe('UNAUTHORIZED');
  });
});

describe('privacy', () => {
  it('SMS text never reaches the log', async () => {
    const secret = 'Tk 777.77 from 01799999999 TrxID ZZTOPSECRET';
    expect((await forward({ messages: [{ ...valid, device_message_id: 'log-1', body: secret }] })).status).toBe(200);
    const logs = t.logs.join('\n');
    expect(logs).not.toContain('ZZTOPSECRET');
    expect(logs).not.toContain('01799999999');
  });
});
