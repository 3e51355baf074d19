import { describe, expect, it } from 'vitest';
import { chargeCurrency, noRateMessage, intentRefusal, quoteGateway, type GatewayQuote } from '../../server/domain/gateways/quote.ts';
import { convertWith, type RateRow } from '../../server/domain/fx/service.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';

function gateway(over: Partial<GatewayView> = {}): GatewayView {
  return {
    id: 1,
    code: 'g',
    name: 'G',
    type: 'manual',
    methods: ['send_money'],
    currencies: ['BDT'],
    minAmount: '10.00',
    maxAmount: '25000.00',
    reviewAbove: null,
    feePercent: '1.85',
    feeFixed: '0.00',
    feePayer: 'merchant',
    receivingAccount: null,
    instructions: null,
    enabled: true,
    smsSenders: [],
    smsTemplates: [],
    sortOrder: 0,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    ...over,
  };
}

const rate = (base: string, quote: string, r: string): RateRow => ({ base, quote, rate: r, updated_at: new Date(0) });

describe('convertWith', () => {
  it.each([
    ['same currency', [], '10.00', 'BDT', 'BDT', { amount: '10.00', rate: null, direction: 'none' }],
    ['direct', [rate('USD', 'BDT', '110.0000000000')], '10.00', 'USD', 'BDT', { amount: '1100.00', rate: '110', direction: 'direct' }],
    ['direct, half-up on .005', [rate('USD', 'BDT', '100.125')], '1.00', 'USD', 'BDT', { amount: '100.13', rate: '100.125', direction: 'direct' }],
    ['direct, half-up below .005', [rate('USD', 'BDT', '100.1249999999')], '1.00', 'USD', 'BDT', { amount: '100.12', direction: 'direct' }],
    ['inverse by division', [rate('BDT', 'USD', '0.0085')], '10.00', 'USD', 'BDT', { amount: '1176.47', rate: '117.6470588235', direction: 'inverse' }],
    ['direct wins over inverse', [rate('BDT', 'USD', '0.5'), rate('USD', 'BDT', '3')], '1.00', 'USD', 'BDT', { amount: '3.00', direction: 'direct' }],
    ['largest amount, exact', [rate('USD', 'BDT', '1.0000000001')], '999999999999.99', 'USD', 'BDT', { amount: '1000000000099.99' }],
  ] as const)('%s', (_name, rates, amount, from, to, expected) => {
    expect(convertWith(rates, amount, from, to)).toMatchObject({ currency: to, ...expected });
  });

  it('no rate either way: null', () => {
    expect(convertWith([rate('EUR', 'BDT', '120')], '1.00', 'USD', 'BDT')).toBeNull();
  });
});

describe('quoteGateway', () => {
  it('charges in the intent currency when the gateway takes it, else in its first currency', () => {
    expect(chargeCurrency(gateway({ currencies: ['BDT', 'USD'] }), 'USD', [])).toBe('USD');
    expect(chargeCurrency(gateway({ currencies: ['BDT', 'USD'] }), 'EUR', [])).toBeNull();
    // Every currency the gateway takes is tried: a EUR->USD rate reaches its second currency.
    expect(chargeCurrency(gateway({ currencies: ['BDT', 'USD'] }), 'EUR', [rate('EUR', 'USD', '1.08')])).toBe('USD');
    // A direct rate beats an inverse one for an earlier currency; among equals the listed order decides.
    expect(chargeCurrency(gateway({ currencies: ['BDT', 'USD'] }), 'EUR', [rate('BDT', 'EUR', '0.0077'), rate('EUR', 'USD', '1.08')])).toBe('USD');
    expect(chargeCurrency(gateway({ currencies: ['BDT', 'USD'] }), 'EUR', [rate('EUR', 'USD', '1.08'), rate('EUR', 'BDT', '130')])).toBe('BDT');
    expect(chargeCurrency(gateway({ currencies: ['BDT', 'USD'] }), 'EUR', [rate('USD', 'EUR', '0.92')])).toBe('USD');
  });

  it.each([
    ['inside the limits', '100.00', null, '1.85'],
    ['exactly the minimum', '10.00', null, '0.19'],
    ['exactly the maximum', '25000.00', null, '462.50'],
    ['a cent below the minimum', '9.99', 'AMOUNT_BELOW_MINIMUM', '0.18'],
    ['a cent above the maximum', '25000.01', 'AMOUNT_EXCEEDS_MAXIMUM', '462.50'],
  ] as const)('%s', (_name, amount, refusal, fee) => {
    expect(quoteGateway(gateway(), amount, 'BDT', [])).toMatchObject({ refusal, amount, fee, converted: false, exchangeRate: null });
  });

  it('checks limits on the converted amount and computes the fee on it (percent plus fixed)', () => {
    const g = gateway({ feePercent: '2.5', feeFixed: '0.30' });
    const q = quoteGateway(g, '90.91', 'USD', [rate('USD', 'BDT', '275')]);
    // 90.91 * 275 = 25000.25 > 25000.00
    expect(q).toMatchObject({ refusal: 'AMOUNT_EXCEEDS_MAXIMUM', amount: '25000.25', currency: 'BDT', converted: true });
    expect(quoteGateway(g, '90.90', 'USD', [rate('USD', 'BDT', '275')])).toMatchObject({ refusal: null, amount: '24997.50', fee: '625.24' });
  });

  it('one number to send: the amount when the merchant pays the fee, amount + fee when the customer does', () => {
    expect(quoteGateway(gateway(), '500.00', 'BDT', [])).toMatchObject({ amount: '500.00', fee: '9.25', toSend: '500.00' });
    expect(quoteGateway(gateway({ feePayer: 'customer' }), '500.00', 'BDT', [])).toMatchObject({ amount: '500.00', fee: '9.25', toSend: '509.25' });
    const converted = quoteGateway(gateway({ feePayer: 'customer', feePercent: '2.5', feeFixed: '0.30' }), '90.90', 'USD', [rate('USD', 'BDT', '275')]);
    expect(converted).toMatchObject({ amount: '24997.50', fee: '625.24', toSend: '25622.74' });
    expect(quoteGateway(gateway({ feePayer: 'customer' }), '1.00', 'USD', [])).toMatchObject({ toSend: null });
  });

  it("converts into a gateway's second currency when only that one has a rate", () => {
    const g = gateway({ currencies: ['BDT', 'USD'], minAmount: '1.00' });
    expect(quoteGateway(g, '100.00', 'EUR', [rate('EUR', 'USD', '1.08')])).toMatchObject({ refusal: null, amount: '108.00', currency: 'USD', converted: true, exchangeRate: '1.08' });
    expect(noRateMessage('EUR', [g])).toBe('No exchange rate converts EUR into any of BDT, USD');
  });

  it('no rate: CURRENCY_CONVERSION_FAILED with no amount', () => {
    expect(quoteGateway(gateway(), '1.00', 'USD', [])).toMatchObject({ refusal: 'CURRENCY_CONVERSION_FAILED', amount: null, fee: null, currency: 'BDT' });
  });

  it('no maximum means any amount above the minimum', () => {
    expect(quoteGateway(gateway({ maxAmount: null }), '999999999999.99', 'BDT', []).refusal).toBeNull();
  });
});

describe('intentRefusal', () => {
  const q = (refusal: GatewayQuote['refusal']) => ({ refusal }) as GatewayQuote;
  it.each([
    ['no gateways: nothing to judge', [], null],
    ['one gateway takes it', [q('AMOUNT_EXCEEDS_MAXIMUM'), q(null)], null],
    ['above every reachable maximum', [q('AMOUNT_EXCEEDS_MAXIMUM'), q('CURRENCY_CONVERSION_FAILED'), q('AMOUNT_EXCEEDS_MAXIMUM')], 'AMOUNT_EXCEEDS_MAXIMUM'],
    ['below every minimum', [q('AMOUNT_BELOW_MINIMUM')], 'AMOUNT_BELOW_MINIMUM'],
    ['above one, below another', [q('AMOUNT_EXCEEDS_MAXIMUM'), q('AMOUNT_BELOW_MINIMUM')], 'AMOUNT_BELOW_MINIMUM'],
    ['no gateway can convert', [q('CURRENCY_CONVERSION_FAILED'), q('CURRENCY_CONVERSION_FAILED')], 'CURRENCY_CONVERSION_FAILED'],
  ] as const)('%s', (_name, quotes, expected) => {
    expect(intentRefusal(quotes)).toBe(expected);
  });
});
