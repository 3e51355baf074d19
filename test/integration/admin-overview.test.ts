import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsScene } from '../support/sms-matching.ts';
import { pairDevice } from '../support/device.ts';
import { adminRequest } from './admin-support.ts';
import { seedTransaction } from '../support/seed.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
});
afterAll(() => t?.close());

const overview = async (query: string) => {
  const res = await adminRequest(t, 'GET', `/overview?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};

describe('admin overview: today per brand', () => {
  it('revenue per currency in the brand’s day, the review queue, devices and webhook health; other brands and the other mode do not count', async () => {
    const scene = await smsScene(t);
    const other = await smsScene(t);
    await t.sql("UPDATE brands SET timezone = 'Asia/Dhaka' WHERE id = $1", [scene.brandId]);
    await seedPayment(t, scene, { amount: '100.00', status: 'completed' });
    await seedPayment(t, scene, { amount: '250.50', status: 'completed' });
    await seedPayment(t, other, { amount: '999.00', status: 'completed' });
    // Completed yesterday in Dhaka: not today's revenue.
    const old = await seedPayment(t, scene, { amount: '40.00', status: 'completed' });
    await t.sql("UPDATE transactions SET completed_at = now() - interval '2 days', created_at = now() - interval '2 days' WHERE id = $1", [old.transaction.id]);
    await seedPayment(t, scene, { amount: '70.00', status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });
    await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('33.00', newGatewayTrxId()) }]);
    // A second phone, silent for two hours (offline at the default 60 minutes) and low on battery; a third revoked.
    const silent = await pairDevice(t, { brandId: scene.brandId });
    await t.sql("UPDATE devices SET last_seen_at = now() - interval '2 hours', paired_at = now() - interval '3 hours', battery_level = 9, is_charging = false, last_heartbeat_at = now() - interval '2 hours' WHERE id = $1", [silent.deviceId]);
    const gone = await pairDevice(t, { brandId: scene.brandId });
    await t.sql("UPDATE devices SET status = 'revoked', revoked_at = now() WHERE id = $1", [gone.deviceId]);

    const [a] = await overview(`brand_id=${scene.brandId}`);
    expect(a).toMatchObject({
      brand_id: scene.brandId,
      brand_status: 'active',
      timezone: 'Asia/Dhaka',
      revenue: [{ currency: 'BDT', amount: '350.50', count: 2 }],
      review: { transactions: 1, sms_records: 1 },
      devices: { online: 1, offline: 1, low_battery: 1 },
      webhooks: { dead_letters: 0, retrying: 0, endpoints_disabled: 0 },
    });
    expect(a.transactions_created).toBe(3);
    expect(a.date).toBe(new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Dhaka' }).format(new Date()));
    expect(typeof a.review.oldest_waiting_since).toBe('string');

    const test = await overview(`brand_id=${scene.brandId}&mode=test`);
    expect(test[0]).toMatchObject({ revenue: [], transactions_created: 0, review: { transactions: 0, sms_records: 0, oldest_waiting_since: null }, devices: { online: 0, offline: 0 } });

    const all = await overview('');
    const ids = all.map((b: { brand_id: number }) => b.brand_id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y));
    expect(all.find((b: { brand_id: number }) => b.brand_id === other.brandId).revenue).toEqual([{ currency: 'BDT', amount: '999.00', count: 1 }]);
  });

  it('waiting_by_mode: each mode’s review queue (payments plus SMS) whatever mode is asked, so the console can show where work waits', async () => {
    const scene = await smsScene(t);
    const { key: testKey } = await createApiKey(t.runtime.deps.db, scene.brandId, { name: 'demo key', mode: 'test' });
    await seedPayment(t, scene, { amount: '71.00', status: 'awaiting_verification', gatewayTrxId: newGatewayTrxId() });
    for (const amount of ['12.00', '13.00']) await seedTransaction(t, { apiKey: testKey, gateway: scene.gateway, status: 'awaiting_verification', amount });
    // Decided or not waiting: not counted.
    await seedTransaction(t, { apiKey: testKey, gateway: scene.gateway, status: 'completed', amount: '14.00' });
    await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('44.00', newGatewayTrxId()) }]);
    const [live] = await overview(`brand_id=${scene.brandId}&mode=live`);
    const [test] = await overview(`brand_id=${scene.brandId}&mode=test`);
    expect(live.waiting_by_mode).toEqual({ live: 2, test: 2 });
    expect(test.waiting_by_mode).toEqual({ live: 2, test: 2 });
    expect(live.review).toMatchObject({ transactions: 1, sms_records: 1 });
    expect(test.review).toMatchObject({ transactions: 2, sms_records: 0 });
    // A brand with nothing waiting: zeros, not absent.
    const quiet = await smsScene(t);
    expect((await overview(`brand_id=${quiet.brandId}`))[0].waiting_by_mode).toEqual({ live: 0, test: 0 });
  });

  it('dead letters and failing endpoints show; an unknown stored time zone counts in UTC', async () => {
    const scene = await smsScene(t);
    await t.sql("UPDATE brands SET timezone = 'Mars/Olympus' WHERE id = $1", [scene.brandId]);
    const [a] = await overview(`brand_id=${scene.brandId}`);
    expect(a.timezone).toBe('UTC');
    expect(a.date).toBe(new Date().toISOString().slice(0, 10));
    const [event] = await t.sql<{ id: string }>(
      "INSERT INTO webhook_events (public_id, brand_id, event, payload, created_at) VALUES ('evt_ov_' || md5(random()::text), $1, 'payment.completed', '{}', now()) RETURNING id",
      [scene.brandId],
    );
    const deliver = (status: string, extra: string) =>
      t.sql(`INSERT INTO webhook_deliveries (event_id, brand_id, url, status${extra ? ', ' + extra.split('=')[0] : ''}) VALUES ($1, $2, 'https://shop.example/hook', $3${extra ? ', ' + extra.split('=')[1] : ''})`, [event!.id, scene.brandId, status]);
    await deliver('dead_letter', 'dead_lettered_at=now()');
    await deliver('dead_letter', 'dead_lettered_at=now()');
    await deliver('retrying', '');
    await deliver('success', 'delivered_at=now()');
    await deliver('success', "delivered_at=now() - interval '2 days'");
    const created = await t.request('POST', '/api/v1/webhooks/endpoints', { token: scene.apiKey, body: { url: 'http://127.0.0.1:9/gone', events: ['payment.completed'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await t.sql("UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone', disabled_at = now() WHERE brand_id = $1", [scene.brandId]);
    const [b] = await overview(`brand_id=${scene.brandId}`);
    expect(b.webhooks).toEqual({ dead_letters: 2, retrying: 1, delivered_24h: 1, endpoints_disabled: 1 });
  });

  it('bad filters: 400 naming the field', async () => {
    for (const [query, field] of [['mode=prod', 'mode'], ['brand_id=0', 'brand_id'], ['brand_id=x', 'brand_id'], ['extra=1', 'extra']]) {
      const res = await adminRequest(t, 'GET', `/overview?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
    expect(await overview('brand_id=999999')).toEqual([]);
  });
});
