import { Decimal } from 'decimal.js';
import { AppError } from '../../../contract/common/errors.ts';

/**
 * Exact money arithmetic on decimal strings. Every result is rounded once, at the
 * end, half-up to two places: rounding intermediate values would let cents drift
 * (sum of rounded parts != rounded sum), which shows up in reconciliation.
 *
 * A private clone, never the global `Decimal`, so no other module can change the
 * precision or rounding mode under us. 40 significant digits leaves ample room for
 * 12-digit amounts times 10-place rates without any intermediate rounding.
 */
export const MoneyDecimal = Decimal.clone({
  precision: 40,
  rounding: Decimal.ROUND_HALF_UP,
  toExpNeg: -9e15,
  toExpPos: 9e15,
});

/** Plain decimal notation only: decimal.js would also take `1e3`, `0x10`, `Infinity`. */
const DECIMAL_RE = /^-?\d+(?:\.\d+)?$/;
const RATE_MAX_PLACES = 10;

export type DecimalInput = string | Decimal;

/**
 * Callers validate amounts at the edge (contract schemas, SMS parser), so a bad
 * value here is a bug or corrupt data: a 500, not a client error.
 */
function parse(value: DecimalInput, what = 'amount'): Decimal {
  if (Decimal.isDecimal(value)) {
    if (!value.isFinite()) throw new AppError('INTERNAL_ERROR', `Invalid ${what}: not a finite decimal`);
    return new MoneyDecimal(value);
  }
  if (typeof value !== 'string' || !DECIMAL_RE.test(value)) {
    throw new AppError('INTERNAL_ERROR', `Invalid ${what}: ${JSON.stringify(String(value).slice(0, 40))} is not a decimal string`);
  }
  return new MoneyDecimal(value);
}

/** Exactly two places, half-up (away from zero on a tie, so -0.005 -> "-0.01"). */
export function toMoney(value: DecimalInput): string {
  const fixed = parse(value).toFixed(2, Decimal.ROUND_HALF_UP);
  // -0.001 rounds to "-0.00"; a signed zero would fail equality checks downstream.
  return fixed === '-0.00' ? '0.00' : fixed;
}

export function addMoney(a: DecimalInput, b: DecimalInput): string {
  return toMoney(parse(a).plus(parse(b)));
}

export function subMoney(a: DecimalInput, b: DecimalInput): string {
  return toMoney(parse(a).minus(parse(b)));
}

/** Compares exact values (not rounded ones). */
export function compareMoney(a: DecimalInput, b: DecimalInput): -1 | 0 | 1 {
  return parse(a).comparedTo(parse(b)) as -1 | 0 | 1;
}

export function isPositive(value: DecimalInput): boolean {
  return parse(value).greaterThan(0);
}

function parseRate(rate: DecimalInput): Decimal {
  const r = parse(rate, 'exchange rate');
  if (r.decimalPlaces() > RATE_MAX_PLACES || !r.greaterThan(0)) {
    throw new AppError('CURRENCY_CONVERSION_FAILED', `Exchange rate must be greater than zero with at most ${RATE_MAX_PLACES} decimal places`);
  }
  return r;
}

/** `amount` in the source currency times `rate` (target units per source unit). */
export function convertAmount(amount: DecimalInput, rate: DecimalInput): string {
  return toMoney(parse(amount).times(parseRate(rate)));
}

/**
 * Converts with a rate quoted the other way round (`rate` = source units per target
 * unit). Prefer this over `convertAmount(amount, invertRate(rate))`: dividing keeps
 * full precision, while a 10-place inverse can be off by 5e-11, which on a
 * 12-digit amount is a visible error.
 */
export function convertAmountInverse(amount: DecimalInput, rate: DecimalInput): string {
  return toMoney(parse(amount).dividedBy(parseRate(rate)));
}

/**
 * 1 / rate, half-up to 10 places (the precision rates are stored with), trailing
 * zeros dropped. For display and storage; see `convertAmountInverse` for converting.
 */
export function invertRate(rate: DecimalInput): string {
  const inv = new MoneyDecimal(1).dividedBy(parseRate(rate)).toDecimalPlaces(RATE_MAX_PLACES, Decimal.ROUND_HALF_UP);
  if (inv.isZero()) {
    throw new AppError('CURRENCY_CONVERSION_FAILED', 'Exchange rate is too large to invert with 10 decimal places');
  }
  return inv.toFixed();
}

/**
 * Gateway fee: `percent` is a percentage ("1.85" means 1.85 %), plus `fixed`.
 * Rounded once, half-up, so 1.85 % of 100.50 plus 0.00 is "1.86" (1.859 25).
 */
export function computeFee(amount: DecimalInput, percent: DecimalInput, fixed: DecimalInput = '0'): string {
  const p = parse(percent, 'fee percent');
  const f = parse(fixed, 'fixed fee');
  if (p.lessThan(0) || f.lessThan(0)) {
    throw new AppError('INTERNAL_ERROR', 'Fee percent and fixed fee must not be negative');
  }
  return toMoney(parse(amount).times(p).dividedBy(100).plus(f));
}
