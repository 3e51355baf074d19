import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { AppError } from '../../contract/common/errors.ts';
import {
  addMoney,
  compareMoney,
  computeFee,
  convertAmount,
  convertAmountInverse,
  invertRate,
  isPositive,
  MoneyDecimal,
  subMoney,
  toMoney,
} from '../../server/domain/money/decimal.ts';

function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected an AppError');
}

describe('toMoney', () => {
  it.each([
    ['0', '0.00'],
    ['1', '1.00'],
    ['1.5', '1.50'],
    ['1.005', '1.01'],
    ['1.004999', '1.00'],
    ['2.675', '2.68'], // 2.67 with binary floats
    ['0.125', '0.13'],
    ['-0.125', '-0.13'],
    ['-0.001', '0.00'],
    ['-0.005', '-0.01'],
    ['0001.10', '1.10'],
    ['999999999999.995', '1000000000000.00'],
    ['123456789012345678901234567890.125', '123456789012345678901234567890.13'],
  ])('%s -> %s', (input, expected) => {
    expect(toMoney(input)).toBe(expected);
  });

  it('takes Decimal instances, including the global constructor', () => {
    expect(toMoney(new Decimal('3.335'))).toBe('3.34');
    expect(toMoney(new MoneyDecimal('0.1').plus('0.2'))).toBe('0.30');
  });

  it.each(['', 'abc', '1e3', '0x10', 'Infinity', 'NaN', '1,000.00', ' 1.00', '1.', '.5', '+1.00'])(
    'rejects %j as INTERNAL_ERROR',
    (input) => {
      const err = errorOf(() => toMoney(input));
      expect(err.code).toBe('INTERNAL_ERROR');
      expect(err.message).toMatch(/^Invalid amount: .* is not a decimal string$/);
    },
  );

  it('rejects non-finite Decimal instances', () => {
    expect(errorOf(() => toMoney(new Decimal(NaN))).code).toBe('INTERNAL_ERROR');
    expect(errorOf(() => toMoney(new Decimal(Infinity))).code).toBe('INTERNAL_ERROR');
  });

  it('does not depend on the global Decimal configuration', () => {
    const saved = { precision: Decimal.precision, rounding: Decimal.rounding };
    Decimal.set({ precision: 3, rounding: Decimal.ROUND_DOWN });
    try {
      expect(toMoney('123456.785')).toBe('123456.79');
      expect(addMoney('99999.99', '0.01')).toBe('100000.00');
    } finally {
      Decimal.set(saved);
    }
  });
});

describe('add, subtract, sum, compare', () => {
  it.each([
    ['0.10', '0.20', '0.30'],
    ['999999999999.99', '0.01', '1000000000000.00'],
    ['1.005', '0', '1.01'],
    ['0.005', '0.005', '0.01'], // rounded once, after adding
    ['-5.00', '2.50', '-2.50'],
  ])('addMoney(%s, %s) = %s', (a, b, expected) => {
    expect(addMoney(a, b)).toBe(expected);
  });

  it.each([
    ['0.30', '0.10', '0.20'],
    ['1.00', '1.00', '0.00'],
    ['1.00', '2.50', '-1.50'],
    ['100.00', '0.001', '100.00'],
  ])('subMoney(%s, %s) = %s', (a, b, expected) => {
    expect(subMoney(a, b)).toBe(expected);
  });

  it.each([
    ['1.00', '2.00', -1],
    ['2.00', '1.00', 1],
    ['1.00', '1', 0],
    ['1.001', '1.00', 1], // exact, not rounded
    ['-1.00', '0.00', -1],
    ['10.00', '9.99', 1], // not string order
  ])('compareMoney(%s, %s) = %i', (a, b, expected) => {
    expect(compareMoney(a, b)).toBe(expected);
  });

  it.each([
    ['0.01', true],
    ['0.001', true],
    ['0.00', false],
    ['-0.00', false],
    ['-1.00', false],
  ])('isPositive(%s) = %s', (input, expected) => {
    expect(isPositive(input)).toBe(expected);
  });
});

describe('toMoney output', () => {
  it('is canonical: two places, no leading zeros, no negative zero, and a fixed point', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.nat(99_999), (whole, frac) => {
        const input = `${whole}.${String(frac).padStart(5, '0')}`;
        const m = toMoney(input);
        expect(m).toMatch(/^-?(?:0|[1-9]\d*)\.\d{2}$/);
        expect(m).not.toBe('-0.00');
        expect(toMoney(m)).toBe(m);
        expect(compareMoney(subMoney(addMoney(m, '12.34'), '12.34'), m)).toBe(0);
      }),
    );
  });
});

describe('currency conversion', () => {
  it.each([
    ['100.00', '117.5', '11750.00'],
    ['10.00', '0.0085', '0.09'], // 0.085 rounds half-up
    ['1.00', '0.0000000001', '0.00'],
    ['999999999999.99', '0.0084745763', '8474576300.00'],
    ['12.34', '1', '12.34'],
    ['0.01', '0.5', '0.01'], // 0.005 -> 0.01
  ])('convertAmount(%s, %s) = %s', (amount, rate, expected) => {
    expect(convertAmount(amount, rate)).toBe(expected);
  });

  it.each([
    ['1180.00', '118', '10.00'],
    ['100.00', '3', '33.33'],
    ['200.00', '3', '66.67'],
    ['999999999999.99', '118', '8474576271.19'],
  ])('convertAmountInverse(%s, %s) = %s', (amount, rate, expected) => {
    expect(convertAmountInverse(amount, rate)).toBe(expected);
  });

  it.each([
    ['2', '0.5'],
    ['118', '0.0084745763'],
    ['3', '0.3333333333'],
    ['1.5', '0.6666666667'],
    ['0.0085', '117.6470588235'],
    ['1', '1'],
  ])('invertRate(%s) = %s', (rate, expected) => {
    expect(invertRate(rate)).toBe(expected);
  });

  it('inverse conversion avoids the error of a rounded inverse on large amounts', () => {
    expect(convertAmount('999999999999.99', invertRate('118'))).toBe('8474576300.00');
    expect(convertAmountInverse('999999999999.99', '118')).toBe('8474576271.19');
  });

  it.each(['0', '-1.5', '0.00000000001', '1.12345678901'])('rejects rate %s', (rate) => {
    const err = errorOf(() => convertAmount('10.00', rate));
    expect(err.code).toBe('CURRENCY_CONVERSION_FAILED');
    expect(errorOf(() => invertRate(rate)).code).toBe('CURRENCY_CONVERSION_FAILED');
    expect(errorOf(() => convertAmountInverse('10.00', rate)).code).toBe('CURRENCY_CONVERSION_FAILED');
  });

  it('rejects a rate whose inverse vanishes at 10 places', () => {
    expect(errorOf(() => invertRate('30000000000')).code).toBe('CURRENCY_CONVERSION_FAILED');
  });

  it('rejects a malformed rate as a bug, not a conversion failure', () => {
    const err = errorOf(() => convertAmount('10.00', '1e2'));
    expect(err.code).toBe('INTERNAL_ERROR');
    expect(err.message).toMatch(/^Invalid exchange rate/);
  });
});

describe('computeFee', () => {
  it.each([
    ['100.00', '1.85', '0', '1.85'],
    ['100.50', '1.85', '0.00', '1.86'], // 1.85925
    ['1000.00', '1.5', '5.00', '20.00'],
    ['10.00', '0', '2.50', '2.50'],
    ['0.27', '1.85', '0', '0.00'], // 0.004995
    ['0.28', '1.85', '0', '0.01'], // 0.00518
    ['33.33', '2.5', '0.004', '0.84'], // 0.833250 + 0.004, rounded once
    ['999999999999.99', '2', '10.00', '20000000010.00'],
  ])('fee on %s at %s percent plus %s = %s', (amount, percent, fixed, expected) => {
    expect(computeFee(amount, percent, fixed)).toBe(expected);
  });

  it('defaults the fixed part to zero', () => {
    expect(computeFee('200.00', '1.25')).toBe('2.50');
  });

  it.each([
    ['-1', '0'],
    ['1', '-0.01'],
  ])('rejects negative percent %s or fixed %s', (percent, fixed) => {
    expect(errorOf(() => computeFee('10.00', percent, fixed)).code).toBe('INTERNAL_ERROR');
  });
});
