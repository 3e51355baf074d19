import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { gatewayPresets, seedGateway } from '../support/seed.ts';
import { createGateway, getGateway, listGateways, updateGateway } from '../../server/domain/gateways/service.ts';
import { quoteGateways } from '../../server/domain/gateways/quote.ts';
import { convert, deleteExchangeRate, listExchangeRates, setExchangeRate } from '../../server/domain/fx/service.ts';
import { getSetting, getSettings, setSetting } from '../../server/domain/settings/service.ts';
import { AppError } from '../../contract/common/errors.ts';

/** Gateway, exchange-rate and settings services (the admin API exposes them later). */

let t: TestContext;
const em = () => t.runtime.deps.db;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

async function rejects(p: Promise<unknown>, code: string, field?: string | null): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
  if (field !== undefined) expect((err as AppError).field ?? (err as AppError).details[0]?.field).toBe(field);
  return err as AppError;
}

describe('gateways', () => {
  it('creates a gateway with every setting and reads it back', async () => {
    const g = await createGateway(em(), { ...gatewayPresets.bkash(), code: 'bkash-main', fee_percent: '1.8500', sort_order: 5 });
    expect(g).toMatchObject({
      code: 'bkash-main',
      name: 'bKash',
      type: 'manual',
      methods: ['send_money'],
      currencies: ['BDT'],
      minAmount: '10.00',
      maxAmount: '25000.00',
      feePercent: '1.85',
      feeFixed: '0.00',
      receivingAccount: '01700000000',
      enabled: true,
      smsSenders: ['bKash'],
      sortOrder: 5,
    });
    expect(g.smsTemplates).toHaveLength(gatewayPresets.bkash().sms_templates!.length);
    expect(g.smsTemplates[0]!.flags).toBe('i');
    expect(await getGateway(em(), 'bkash-main')).toEqual(g);
  });

  it('defaults: min 0.01, no maximum, no fee, enabled, no SMS', async () => {
    const g = await createGateway(em(), { code: 'plain', name: 'Plain', type: 'automatic', methods: ['card'], currencies: ['USD'] });
    expect(g).toMatchObject({ minAmount: '0.01', maxAmount: null, feePercent: '0', feeFixed: '0.00', enabled: true, smsSenders: [], smsTemplates: [] });
  });

  it('a duplicate code is a CONFLICT on code', async () => {
    await createGateway(em(), { ...gatewayPresets.nagad(), code: 'dup' });
    await rejects(createGateway(em(), { ...gatewayPresets.nagad(), code: 'dup' }), 'CONFLICT', 'code');
  });

  it.each([
    ['a code with capitals', { code: 'BKash' }, 'code'],
    ['an unknown type', { type: 'hybrid' }, 'type'],
    ['no methods', { methods: [] }, 'methods'],
    ['no currencies', { currencies: [] }, 'currencies'],
    ['a lower-case currency', { currencies: ['bdt'] }, 'currencies.0'],
    ['a zero minimum', { min_amount: '0.00' }, 'min_amount'],
    ['a maximum with three places', { max_amount: '10.000' }, 'max_amount'],
    ['a fee of 100 %', { fee_percent: '100' }, 'fee_percent'],
    ['a negative fixed fee', { fee_fixed: '-1.00' }, 'fee_fixed'],
    ['a maximum below the minimum', { min_amount: '100.00', max_amount: '99.99' }, 'max_amount'],
  ])('refuses %s: VALIDATION_ERROR on %s', async (_name, patch, field) => {
    await rejects(createGateway(em(), { ...gatewayPresets.rocket(), ...(patch as object) }), 'VALIDATION_ERROR', field);
  });

  it.each([
    ['without a trx_id group', { pattern: String.raw`received (?<amount>\d+)` }],
    ['that does not compile', { pattern: '(?<amount>\\d+' }],
    ['with the g flag', { pattern: String.raw`(?<amount>\d+) (?<trx_id>\w+)`, flags: 'g' }],
    ['with a lookahead RE2 cannot run', { pattern: String.raw`(?<amount>\d+)(?!\d) (?<trx_id>\w+)` }],
  ])('refuses an SMS template %s: INVALID_SMS_TEMPLATE naming it', async (_name, template) => {
    await rejects(createGateway(em(), { ...gatewayPresets.rocket(), sms_templates: [gatewayPresets.rocket().sms_templates![0]!, template] }), 'INVALID_SMS_TEMPLATE', 'sms_templates.1.pattern');
  });

  it('updates only the given fields, with the same validation', async () => {
    const g = await seedGateway(t, 'bkash', { enabled: true, fee_fixed: '2.00' });
    const updated = await updateGateway(em(), g.code, { max_amount: '30000.00', enabled: false });
    expect(updated).toMatchObject({ maxAmount: '30000.00', enabled: false, feeFixed: '2.00', minAmount: '10.00', name: 'bKash' });
    await rejects(updateGateway(em(), g.code, { min_amount: '40000.00' }), 'VALIDATION_ERROR', 'max_amount');
    await rejects(updateGateway(em(), g.code, { sms_templates: [{ pattern: 'no groups' }] }), 'INVALID_SMS_TEMPLATE', 'sms_templates.0.pattern');
    const cleared = await updateGateway(em(), g.code, { max_amount: null, receiving_account: null });
    expect(cleared).toMatchObject({ maxAmount: null, receivingAccount: null, feeFixed: '2.00' });
    await rejects(updateGateway(em(), 'missing', { enabled: true }), 'GATEWAY_NOT_FOUND');
    await rejects(getGateway(em(), 'missing'), 'GATEWAY_NOT_FOUND');
  });

  it('lists in display order; enabledOnly hides disabled ones', async () => {
    const late = await seedGateway(t, 'nagad', { sort_order: 900 });
    const early = await seedGateway(t, 'nagad', { sort_order: -900 });
    const off = await seedGateway(t, 'nagad', { sort_order: 0, enabled: false });
    const all = (await listGateways(em())).map((g) => g.code);
    expect(all[0]).toBe(early.code);
    expect(all[all.length - 1]).toBe(late.code);
    expect(all).toContain(off.code);
    expect((await listGateways(em(), { enabledOnly: true })).map((g) => g.code)).not.toContain(off.code);
  });
});

describe('exchange rates', () => {
  it('sets, replaces, lists and deletes a pair', async () => {
    expect(await setExchangeRate(em(), { base: 'SGD', quote: 'BDT', rate: '88.5' })).toMatchObject({ base: 'SGD', quote: 'BDT', rate: '88.5' });
    expect((await setExchangeRate(em(), { base: 'SGD', quote: 'BDT', rate: '89.0123456789' })).rate).toBe('89.0123456789');
    expect((await listExchangeRates(em())).filter((r) => r.base === 'SGD')).toEqual([
      { base: 'SGD', quote: 'BDT', rate: '89.0123456789', updatedAt: expect.any(Date) },
    ]);
    await deleteExchangeRate(em(), 'SGD', 'BDT');
    await rejects(deleteExchangeRate(em(), 'SGD', 'BDT'), 'EXCHANGE_RATE_NOT_FOUND');
  });

  it.each([
    ['a zero rate', { base: 'AUD', quote: 'BDT', rate: '0' }, 'rate'],
    ['eleven decimal places', { base: 'AUD', quote: 'BDT', rate: '1.12345678901' }, 'rate'],
    ['a rate in exponent form', { base: 'AUD', quote: 'BDT', rate: '1e2' }, 'rate'],
    ['a negative rate', { base: 'AUD', quote: 'BDT', rate: '-2' }, 'rate'],
    ['the same currency twice', { base: 'BDT', quote: 'BDT', rate: '1' }, 'quote'],
    ['a lower-case code', { base: 'aud', quote: 'BDT', rate: '1' }, 'base'],
  ])('refuses %s', async (_name, input, field) => {
    await rejects(setExchangeRate(em(), input), 'VALIDATION_ERROR', field);
  });

  it('converts directly, inversely, or refuses', async () => {
    await setExchangeRate(em(), { base: 'CHF', quote: 'BDT', rate: '133.3333333333' });
    expect(await convert(em(), '3.00', 'CHF', 'BDT')).toEqual({ amount: '400.00', currency: 'BDT', rate: '133.3333333333', direction: 'direct' });
    // 400.00 / 133.3333333333 = 3.0000000000075 -> 3.00
    expect(await convert(em(), '400.00', 'BDT', 'CHF')).toMatchObject({ amount: '3.00', direction: 'inverse', rate: '0.0075' });
    expect(await convert(em(), '5.00', 'CHF', 'CHF')).toEqual({ amount: '5.00', currency: 'CHF', rate: null, direction: 'none' });
    await rejects(convert(em(), '1.00', 'CHF', 'NOK'), 'CURRENCY_CONVERSION_FAILED');
  });
});

describe('gateway quotes', () => {
  it('quotes every enabled gateway with its converted amount, fee and refusal', async () => {
    await setExchangeRate(em(), { base: 'CAD', quote: 'BDT', rate: '80' });
    const usdOnly = await seedGateway(t, 'sandbox', { currencies: ['JPY'], sort_order: -999 });
    const quotes = await quoteGateways(em(), '400.00', 'CAD');
    const bdt = quotes.find((q) => q.gateway.code === 'bkash-main')!;
    expect(bdt).toMatchObject({ refusal: 'AMOUNT_EXCEEDS_MAXIMUM', amount: '32000.00', currency: 'BDT', exchangeRate: '80', converted: true });
    expect(quotes.find((q) => q.gateway.code === usdOnly.code)).toMatchObject({ refusal: 'CURRENCY_CONVERSION_FAILED', amount: null, fee: null });
    const small = (await quoteGateways(em(), '10.00', 'CAD')).find((q) => q.gateway.code === 'bkash-main')!;
    expect(small).toMatchObject({ refusal: null, amount: '800.00', fee: '14.80' });
  });
});

describe('settings', () => {
  it('defaults without rows, stored values once set, validation on write', async () => {
    expect(await getSettings(em())).toEqual({ intent_expiry_minutes: 60, match_threshold: 0.8, match_window_minutes: 1440, match_clock_grace_seconds: 300, device_offline_minutes: 60, battery_low_percent: 15, review_waiting_minutes: 30, sms_alarm_window_minutes: 60, sms_alarm_min_messages: 5, sms_alarm_rise: 0.5 });
    expect(await setSetting(em(), 'match_threshold', 0.95)).toBe(0.95);
    expect(await getSetting(em(), 'match_threshold')).toBe(0.95);
    await rejects(setSetting(em(), 'match_threshold', 1.5), 'VALIDATION_ERROR', 'match_threshold');
    await rejects(setSetting(em(), 'intent_expiry_minutes', 0), 'VALIDATION_ERROR', 'intent_expiry_minutes');
    await rejects(setSetting(em(), 'nonsense' as never, 1), 'VALIDATION_ERROR', 'nonsense');
    expect(await getSetting(em(), 'match_threshold')).toBe(0.95);
  });

  it('a corrupt stored value falls back to the default', async () => {
    await t.sql(`INSERT INTO settings (key, value) VALUES ('device_offline_minutes', '"soon"') ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`);
    expect(await getSetting(em(), 'device_offline_minutes')).toBe(60);
  });
});
