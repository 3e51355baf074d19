import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raiseAlert, type AlertInput } from '../../server/domain/alerts/raise.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { adminRequest, auditRows } from './admin-support.ts';
import { transaction } from '../../server/domain/db.ts';

let t: TestContext;

beforeAll(async () => {
  // No SMTP configured and no workers: alerts stay as raised, which the list shows.
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const raise = (input: AlertInput) => transaction(t.runtime.deps.db, (tx) => raiseAlert(tx, input));

describe('admin alerts API', () => {
  it('lists alerts newest first, filtered by brand, type and status', async () => {
    const a = await t.createBrand('Alerts A');
    const b = await t.createBrand('Alerts B');
    await raise({ brandId: a.brandId, type: 'device_offline', dedupeKey: 'd:1', subject: 'Device "One" is offline', details: { device_uuid: 'x' } });
    await raise({ brandId: a.brandId, type: 'battery_low', dedupeKey: 'b:1', subject: 'Battery low', details: { battery_level: 9 } });
    await raise({ brandId: b.brandId, type: 'device_offline', dedupeKey: 'd:1', subject: 'Device "Two" is offline', details: {} });

    const all = await adminRequest(t, 'GET', `/alerts?brand_id=${a.brandId}`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((x: any) => x.type)).toEqual(['battery_low', 'device_offline']);
    expect(all.body.data[0]).toMatchObject({ brand_id: a.brandId, subject: 'Battery low', details: { battery_level: 9 }, status: 'pending', attempts: 0, last_error: null, delivered_at: null });
    expect(all.body.meta).toMatchObject({ total: 2 });

    const typed = await adminRequest(t, 'GET', '/alerts?type=device_offline&status=pending');
    const mine = typed.body.data.filter((x: any) => [a.brandId, b.brandId].includes(x.brand_id));
    expect(mine.map((x: any) => x.subject).sort()).toEqual(['Device "One" is offline', 'Device "Two" is offline']);

    const bad = await adminRequest(t, 'GET', '/alerts?type=coffee_empty');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('type');
  });

  it('alert settings: switch types off per brand (audited); a switched-off type is not raised', async () => {
    const { brandId } = await t.createBrand('Switches');
    expect((await adminRequest(t, 'GET', `/brands/${brandId}/alert-settings`)).body.data).toEqual({ brand_id: brandId, disabled_types: [] });
    const put = await adminRequest(t, 'PUT', `/brands/${brandId}/alert-settings`, { disabled_types: ['review_waiting', 'battery_low'] });
    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({ brand_id: brandId, disabled_types: ['battery_low', 'review_waiting'] });
    expect((await adminRequest(t, 'GET', `/brands/${brandId}/alert-settings`)).body.data.disabled_types).toEqual(['battery_low', 'review_waiting']);
    const audit = (await auditRows(t, 'alert_settings.update')).filter((r) => r.brand_id === String(brandId));
    expect(audit.map((r) => [r.before, r.after])).toEqual([[{ disabled_types: [] }, { disabled_types: ['battery_low', 'review_waiting'] }]]);

    expect(await raise({ brandId, type: 'battery_low', dedupeKey: 'b', subject: 'Battery low', details: {} })).toEqual({ raised: false, reason: 'switched_off' });
    expect(await raise({ brandId, type: 'device_offline', dedupeKey: 'd', subject: 'Offline', details: {} })).toMatchObject({ raised: true });

    const bad = await adminRequest(t, 'PUT', `/brands/${brandId}/alert-settings`, { disabled_types: ['battery_low', 'nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toMatch(/^disabled_types/);
    expect((await adminRequest(t, 'GET', `/brands/${brandId}/alert-settings`)).body.data.disabled_types).toEqual(['battery_low', 'review_waiting']);

    expect((await adminRequest(t, 'PUT', '/brands/999999/alert-settings', { disabled_types: [] })).status).toBe(404);
    expect((await adminRequest(t, 'GET', '/brands/999999/alert-settings')).body.errors[0].code).toBe('BRAND_NOT_FOUND');
  });
});
