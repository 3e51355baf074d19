import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, gatewayPresets } from '../support/seed.ts';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { adminRequest, auditCount, auditRows } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const bkash = (code: string) => ({ ...gatewayPresets.bkash(), code });

describe('gateways', () => {
  it('create with senders, templates, currencies, limits and fees; read back; list in display order', async () => {
    const created = await adminRequest(t, 'POST', '/gateways', { ...bkash('bkash'), sort_order: 2 });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      code: 'bkash',
      type: 'manual',
      currencies: ['BDT'],
      min_amount: '10.00',
      max_amount: '25000.00',
      fee_percent: '1.85',
      fee_fixed: '0.00',
      sms_senders: ['bKash'],
      sms_templates: gatewayPresets.bkash().sms_templates!.map(({ pattern, flags }) => ({ pattern, flags })),
      enabled: true,
      sort_order: 2,
    });
    await adminRequest(t, 'POST', '/gateways', { ...gatewayPresets.sandbox(), code: 'sandbox', sort_order: 1 });
    expect((await adminRequest(t, 'GET', '/gateways/bkash')).body.data).toEqual(created.body.data);
    expect((await adminRequest(t, 'GET', '/gateways')).body.data.map((g: { code: string }) => g.code)).toEqual(['sandbox', 'bkash']);
    expect((await auditRows(t, 'gateway.create')).map((r) => [r.target_id, r.after])).toEqual([
      ['bkash', { enabled: true, type: 'manual', currencies: ['BDT'], min_amount: '10.00', max_amount: '25000.00', review_above: null, fee_percent: '1.85', fee_fixed: '0.00', fee_payer: 'merchant', sms_senders: ['bKash'], sms_templates: gatewayPresets.bkash().sms_templates!.length }],
      ['sandbox', { enabled: true, type: 'automatic', currencies: ['BDT', 'USD'], min_amount: '1.00', max_amount: null, review_above: null, fee_percent: '2.5', fee_fixed: '0.30', fee_payer: 'merchant', sms_senders: [], sms_templates: 0 }],
    ]);
  });

  it('update changes only the given fields; limits and fees apply to new payments at once; the change is audited', async () => {
    const { apiKey } = await t.createBrand('Limits Brand');
    await adminRequest(t, 'POST', '/gateways', bkash('limits'));
    const updated = await adminRequest(t, 'PATCH', '/gateways/limits', { max_amount: '500.00', fee_fixed: '5.00', sms_senders: ['bKash', '16247'] });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ code: 'limits', min_amount: '10.00', max_amount: '500.00', fee_percent: '1.85', fee_fixed: '5.00', sms_senders: ['bKash', '16247'], name: 'bKash' });
    const [row] = (await auditRows(t, 'gateway.update')).filter((r) => r.target_id === 'limits');
    expect([row!.before!.max_amount, row!.after!.max_amount, row!.before!.fee_fixed, row!.after!.fee_fixed]).toEqual(['25000.00', '500.00', '0.00', '5.00']);
    expect(row!.after!.sms_senders).toEqual(['bKash', '16247']);

    // Disable every gateway but this one, then a payment above its new maximum is refused.
    await adminRequest(t, 'PATCH', '/gateways/bkash', { enabled: false });
    await adminRequest(t, 'PATCH', '/gateways/sandbox', { enabled: false });
    const refused = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '600.00', currency: 'BDT' } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ code: 'AMOUNT_EXCEEDS_MAXIMUM', message: 'Amount exceeds maximum' });
    expect((await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '400.00', currency: 'BDT' } })).status).toBe(201);
  });

  it('enable/disable is audited; a change to name or instructions only is not', async () => {
    await adminRequest(t, 'POST', '/gateways', bkash('toggle'));
    const before = await auditCount(t);
    expect((await adminRequest(t, 'PATCH', '/gateways/toggle', { instructions: 'Send Money, then type the TrxID.' })).status).toBe(200);
    expect(await auditCount(t)).toBe(before);
    expect((await adminRequest(t, 'PATCH', '/gateways/toggle', { enabled: false })).body.data.enabled).toBe(false);
    const rows = (await auditRows(t, 'gateway.update')).filter((r) => r.target_id === 'toggle');
    expect(rows.map((r) => [r.before!.enabled, r.after!.enabled])).toEqual([[true, false]]);
  });

  it('templates are validated: INVALID_SMS_TEMPLATE naming the template, nothing changes', async () => {
    await adminRequest(t, 'POST', '/gateways', bkash('tpl'));
    const audits = await auditCount(t);
    for (const [pattern, flags, message] of [
      ['(?<amount>\\d+) TrxID', 'i', expect.stringContaining('trx_id')],
      ['(?<amount>\\d+ (?<trx_id>\\w+)', '', expect.any(String)],
      ['(?<amount>\\d+)(?!\\d) (?<trx_id>\\w+)', '', expect.stringContaining('linear-time engine')],
      ['(?<amount>\\d+) (?<trx_id>\\w+)', 'g', expect.stringContaining('"g"')],
    ] as const) {
      const res = await adminRequest(t, 'PATCH', '/gateways/tpl', { sms_templates: [{ pattern: '^(?<amount>\\d+) (?<trx_id>\\w+)$' }, { pattern, flags }] });
      expect(res.status, pattern).toBe(422);
      expect(res.body.errors).toEqual([{ code: 'INVALID_SMS_TEMPLATE', message, field: 'sms_templates.1.pattern' }]);
    }
    const created = await adminRequest(t, 'POST', '/gateways', { ...bkash('tpl-new'), sms_templates: [{ pattern: 'no groups' }] });
    expect(created.status).toBe(422);
    expect(created.body.errors[0].field).toBe('sms_templates.0.pattern');
    expect((await adminRequest(t, 'GET', '/gateways/tpl-new')).status).toBe(404);
    expect((await adminRequest(t, 'GET', '/gateways/tpl')).body.data.sms_templates).toHaveLength(gatewayPresets.bkash().sms_templates!.length);
    expect(await auditCount(t)).toBe(audits);
  });

  it.each([
    ['POST', '/gateways', { ...gatewayPresets.bkash(), code: 'Bad Code' }, 'code'],
    ['POST', '/gateways', { ...gatewayPresets.bkash(), min_amount: '10' }, 'min_amount'],
    ['POST', '/gateways', { ...gatewayPresets.bkash(), fee_percent: 1.85 }, 'fee_percent'],
    ['POST', '/gateways', { ...gatewayPresets.bkash(), currencies: ['bdt'] }, 'currencies.0'],
    ['POST', '/gateways', { ...gatewayPresets.bkash(), api_secret: 'x' }, 'api_secret'],
    ['PATCH', '/gateways/bkash', { max_amount: 100 }, 'max_amount'],
    ['PATCH', '/gateways/bkash', {}, 'body'],
  ])('%s %s: 400 naming %s', async (method, path, body, field) => {
    const res = await adminRequest(t, method, path, body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(res.body.errors.every((e: { code: string }) => e.code === 'VALIDATION_ERROR')).toBe(true);
  });

  it('max below min is a 400 on max_amount; a duplicate code is a 409 CONFLICT; unknown codes are 404', async () => {
    const low = await adminRequest(t, 'PATCH', '/gateways/bkash', { max_amount: '5.00' });
    expect(low.status).toBe(400);
    expect(low.body.errors).toEqual([{ code: 'VALIDATION_ERROR', message: 'max_amount must not be below min_amount', field: 'max_amount' }]);
    const dup = await adminRequest(t, 'POST', '/gateways', bkash('bkash'));
    expect(dup.status).toBe(409);
    expect(dup.body.errors).toEqual([{ code: 'CONFLICT', message: 'A gateway with code "bkash" already exists', field: 'code' }]);
    for (const [method, body] of [['GET', undefined], ['PATCH', { enabled: false }]] as const) {
      const res = await adminRequest(t, method, '/gateways/nope', body);
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('GATEWAY_NOT_FOUND');
    }
  });
});

describe('exchange rates', () => {
  it('set (create, replace), list, delete; each change audited; conversion follows', async () => {
    const set = await adminRequest(t, 'PUT', '/exchange-rates/USD/BDT', { rate: '110.2500' });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({ base: 'USD', quote: 'BDT', rate: '110.25', updated_at: expect.any(String) });
    expect((await adminRequest(t, 'PUT', '/exchange-rates/USD/BDT', { rate: '111' })).body.data.rate).toBe('111');
    await adminRequest(t, 'PUT', '/exchange-rates/EUR/BDT', { rate: '120.5' });
    expect((await adminRequest(t, 'GET', '/exchange-rates')).body.data.map((r: { base: string; rate: string }) => `${r.base}:${r.rate}`)).toEqual(['EUR:120.5', 'USD:111']);
    const deleted = await adminRequest(t, 'DELETE', '/exchange-rates/EUR/BDT');
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ base: 'EUR', quote: 'BDT', rate: '120.5' });
    expect((await adminRequest(t, 'GET', '/exchange-rates')).body.data).toHaveLength(1);
    expect((await auditRows(t)).filter((r) => r.target_type === 'exchange_rate').map((r) => [r.action, r.target_id, r.before, r.after])).toEqual([
      ['exchange_rate.set', 'USD/BDT', null, { rate: '110.25' }],
      ['exchange_rate.set', 'USD/BDT', { rate: '110.25' }, { rate: '111' }],
      ['exchange_rate.set', 'EUR/BDT', null, { rate: '120.5' }],
      ['exchange_rate.delete', 'EUR/BDT', { rate: '120.5' }, null],
    ]);
  });

  it('bad pairs and rates: 400 naming the field; unknown pair on delete: 404', async () => {
    for (const [path, body, field] of [
      ['/exchange-rates/usd/BDT', { rate: '1' }, 'base'],
      ['/exchange-rates/USD/BDT', { rate: 110.25 }, 'rate'],
      ['/exchange-rates/USD/BDT', { rate: '0' }, 'rate'],
      ['/exchange-rates/USD/BDT', { rate: '-1' }, 'rate'],
      ['/exchange-rates/USD/USD', { rate: '1' }, 'quote'],
    ] as const) {
      const res = await adminRequest(t, 'PUT', path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    const missing = await adminRequest(t, 'DELETE', '/exchange-rates/JPY/BDT');
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0].code).toBe('EXCHANGE_RATE_NOT_FOUND');
  });
});

describe('SMS filter rules', () => {
  it('get returns the defaults; a change bumps the version once, an identical change does not; the phone sees it', async () => {
    const device = await pairDevice(t);
    const initial = await adminRequest(t, 'GET', `/brands/${device.brandId}/filter-rules`);
    expect(initial.status).toBe(200);
    const v1 = initial.body.data.version;
    expect(initial.body.data.extra_senders).toEqual([]);
    const changed = await adminRequest(t, 'PATCH', `/brands/${device.brandId}/filter-rules`, { extra_senders: [' ShopBank ', '01847-348685', 'shopbank', '+8801847348685'], check_interval_hours: 6 });
    expect(changed.body.data).toMatchObject({ version: v1 + 1, extra_senders: ['ShopBank', '01847-348685'], check_interval_hours: 6, negative_keywords: initial.body.data.negative_keywords });
    expect(changed.body.data.allowed_senders).toEqual([...initial.body.data.allowed_senders, 'ShopBank', '01847-348685']);
    const same = await adminRequest(t, 'PATCH', `/brands/${device.brandId}/filter-rules`, { extra_senders: ['ShopBank', '01847-348685'] });
    expect(same.body.data.version).toBe(v1 + 1);
    const { extra_senders: _extra, ...deviceView } = changed.body.data;
    expect((await deviceRequest(t, device, 'GET', '/config/filter-rules')).body.data).toEqual(deviceView);
    const rows = (await auditRows(t, 'filter_rules.update')).filter((r) => r.brand_id === String(device.brandId));
    expect(rows.map((r) => [r.before!.version, r.after!.version, r.after!.extra_senders])).toEqual([[v1, v1 + 1, ['ShopBank', '01847-348685']]]);
  });

  it('bad rules: 400 naming the entry; unknown brand: 404', async () => {
    const { brandId } = await t.createBrand('Rules Brand');
    const before = (await adminRequest(t, 'GET', `/brands/${brandId}/filter-rules`)).body.data.version;
    for (const [body, field] of [
      [{ negative_keywords: ['ok', ''] }, 'negative_keywords.1'],
      [{ check_interval_hours: 0 }, 'check_interval_hours'],
      [{ check_interval_hours: 1.5 }, 'check_interval_hours'],
      [{ extra_senders: 'bKash' }, 'extra_senders'],
      [{ extra_senders: ['ｂＫａｓｈ'] }, 'extra_senders.0'],
      [{ allowed_senders: ['bKash'] }, 'allowed_senders'],
      [{ blocked_senders: [] }, 'blocked_senders'],
      [{}, 'body'],
    ] as const) {
      const res = await adminRequest(t, 'PATCH', `/brands/${brandId}/filter-rules`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    expect((await adminRequest(t, 'GET', `/brands/${brandId}/filter-rules`)).body.data.version).toBe(before);
    for (const method of ['GET', 'PATCH']) {
      const res = await adminRequest(t, method, '/brands/999999/filter-rules', method === 'PATCH' ? { check_interval_hours: 2 } : undefined);
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('BRAND_NOT_FOUND');
    }
  });
});

describe('settings', () => {
  it('get shows the effective values; update changes only the given ones, all or nothing, audited', async () => {
    expect((await adminRequest(t, 'GET', '/settings')).body.data).toEqual({ intent_expiry_minutes: 60, match_threshold: 0.8, match_window_minutes: 1440, match_clock_grace_seconds: 300, device_offline_minutes: 60, battery_low_percent: 15, review_waiting_minutes: 30, sms_alarm_window_minutes: 60, sms_alarm_min_messages: 5, sms_alarm_rise: 0.5 });
    const res = await adminRequest(t, 'PATCH', '/settings', { intent_expiry_minutes: 30, match_threshold: 0.9 });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ intent_expiry_minutes: 30, match_threshold: 0.9, match_window_minutes: 1440, match_clock_grace_seconds: 300, device_offline_minutes: 60, battery_low_percent: 15, review_waiting_minutes: 30, sms_alarm_window_minutes: 60, sms_alarm_min_messages: 5, sms_alarm_rise: 0.5 });
    expect((await auditRows(t, 'settings.update')).map((r) => [r.before, r.after])).toEqual([
      [{ intent_expiry_minutes: 60, match_threshold: 0.8 }, { intent_expiry_minutes: 30, match_threshold: 0.9 }],
    ]);
    // New intents take the new expiry.
    const { apiKey } = await t.createBrand('Expiry Brand');
    await adminRequest(t, 'POST', '/gateways', bkash('expiry-gw'));
    const payment = await createPayment(t, apiKey);
    const minutes = (Date.parse(payment.expires_at) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(29);
    expect(minutes).toBeLessThanOrEqual(30);
  });

  it('bad values: 400 naming the setting, nothing stored', async () => {
    const before = (await adminRequest(t, 'GET', '/settings')).body.data;
    for (const [body, field] of [
      [{ match_threshold: 1.5 }, 'match_threshold'],
      [{ intent_expiry_minutes: 0 }, 'intent_expiry_minutes'],
      [{ device_offline_minutes: '60' }, 'device_offline_minutes'],
      [{ match_clock_grace_seconds: -1 }, 'match_clock_grace_seconds'],
      [{ match_clock_grace_seconds: 3601 }, 'match_clock_grace_seconds'],
      [{ match_clock_grace_seconds: 1.5 }, 'match_clock_grace_seconds'],
      [{ intent_expiry_minutes: 10, webhook_max_attempts: 3 }, 'webhook_max_attempts'],
      [{}, 'body'],
    ] as const) {
      const res = await adminRequest(t, 'PATCH', '/settings', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    expect((await adminRequest(t, 'GET', '/settings')).body.data).toEqual(before);
  });
});
