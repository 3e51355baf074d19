import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepReviewWaiting } from '../../server/domain/alerts/review-waiting.job.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { seedGateway, seedSetting, seedTransaction } from '../support/seed.ts';

let t: TestContext;

beforeAll(async () => {
  // Sweeps are run directly below; no SMTP configured, so alerts end as `failed` (no channel), which is what the admin sees.
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const alertsOf = (brandId: number, type: string) =>
  t.sql<{ subject: string; details: Record<string, unknown> }>('SELECT subject, details FROM alerts WHERE brand_id = $1 AND type = $2 ORDER BY id', [brandId, type]);

describe('alert sources', () => {
  it('battery_low: one alert when a heartbeat takes the battery below the setting, again only after it recovered', async () => {
    const d = await pairDevice(t, { name: 'Shop phone' });
    const beat = async (level: number, charging = false) =>
      expect((await deviceRequest(t, d, 'POST', '/devices/heartbeats', { battery_level: level, is_charging: charging })).status).toBe(200);
    await beat(50);
    await beat(14);
    await beat(10);
    await beat(12);
    let alerts = await alertsOf(d.brandId, 'battery_low');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.subject).toBe('Device "Shop phone" battery is low (14%)');
    expect(alerts[0]!.details).toMatchObject({ device_uuid: d.deviceUuid, battery_level: 14, threshold: 15 });
    await beat(80, true);
    await beat(5, true); // charging: no alert
    expect(await alertsOf(d.brandId, 'battery_low')).toHaveLength(1);
    await beat(60);
    await seedSetting(t, 'battery_low_percent', 70);
    try {
      await beat(75);
      await beat(65);
    } finally {
      await seedSetting(t, 'battery_low_percent', 15);
    }
    alerts = await alertsOf(d.brandId, 'battery_low');
    expect(alerts.map((a) => a.details.battery_level)).toEqual([14, 65]);
  });

  it('review_waiting: one alert per brand and mode while the same oldest payment waits longer than the setting', async () => {
    const { brandId, apiKey } = await t.createBrand('Review brand');
    const gateway = await seedGateway(t, 'bkash');
    const a = await seedTransaction(t, { apiKey, gateway, status: 'awaiting_verification' });
    const b = await seedTransaction(t, { apiKey, gateway, status: 'awaiting_verification' });
    const em = () => t.runtime.deps.db;
    await sweepReviewWaiting(em());
    expect(await alertsOf(brandId, 'review_waiting')).toEqual([]);

    await t.sql("UPDATE transactions SET updated_at = now() - interval '45 minutes' WHERE id = ANY($1)", [[a.transaction.id, b.transaction.id]]);
    await sweepReviewWaiting(em());
    await sweepReviewWaiting(em());
    const alerts = await alertsOf(brandId, 'review_waiting');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.subject).toBe('2 payment(s) waiting for review longer than 30 minutes');
    expect(alerts[0]!.details).toMatchObject({ mode: 'live', waiting: 2, threshold_minutes: 30 });

    // The oldest one is dealt with; the other still waits: a new episode.
    await t.sql("UPDATE transactions SET status = 'failed' WHERE id = $1", [a.transaction.id]);
    await t.sql("UPDATE transactions SET updated_at = updated_at + interval '1 second' WHERE id = $1", [b.transaction.id]);
    await sweepReviewWaiting(em());
    expect(await alertsOf(brandId, 'review_waiting')).toHaveLength(2);
  });
});
