import { AppError } from '../../../contract/common/errors.ts';
import { type Db } from '../db.ts';
import { deleteRate, selectRates, selectRatesBetween, upsertRate, type RateRow } from './queries.ts';
import { convertAmount, convertAmountInverse, invertRate } from '../money/decimal.ts';

const CURRENCY_RE = /^[A-Z]{3}$/;
/** numeric(20,10): at most 10 integer digits and 10 places. */
const RATE_RE = /^(?:0|[1-9]\d{0,9})(?:\.\d{1,10})?$/;

export interface ExchangeRateView {
  base: string;
  quote: string;
  /** Decimal string as stored (numeric(20,10), trailing zeros dropped). */
  rate: string;
  updatedAt: Date;
}

export interface Conversion {
  /** The converted amount, two places, rounded half-up once. */
  amount: string;
  currency: string;
  /**
   * Target units per source unit. Null when no conversion happened. For an inverse
   * conversion this is 1/rate to 10 places, for the record only: the amount itself
   * was computed by exact division.
   */
  rate: string | null;
  direction: 'none' | 'direct' | 'inverse';
}

/** A rate as the conversions read it. */
export type { RateRow };

/** Drops the zeros numeric(20,10) pads with: "110.5000000000" -> "110.5". */
function trimRate(rate: string): string {
  return rate.includes('.') ? rate.replace(/0+$/, '').replace(/\.$/, '') : rate;
}

function toView(r: RateRow): ExchangeRateView {
  return { base: r.base, quote: r.quote, rate: trimRate(r.rate), updatedAt: r.updated_at };
}

function checkPair(base: string, quote: string): void {
  if (!CURRENCY_RE.test(base)) throw new AppError('VALIDATION_ERROR', 'Currency must be a three-letter ISO 4217 code in upper case', { field: 'base' });
  if (!CURRENCY_RE.test(quote)) throw new AppError('VALIDATION_ERROR', 'Currency must be a three-letter ISO 4217 code in upper case', { field: 'quote' });
  if (base === quote) throw new AppError('VALIDATION_ERROR', 'Base and quote currencies must differ', { field: 'quote' });
}

/** Creates or replaces the rate of one ordered pair: 1 `base` = `rate` `quote`. */
export async function setExchangeRate(em: Db, input: { base: string; quote: string; rate: string }): Promise<ExchangeRateView> {
  checkPair(input.base, input.quote);
  if (!RATE_RE.test(input.rate) || !/[1-9]/.test(input.rate)) {
    throw new AppError('VALIDATION_ERROR', 'Rate must be a decimal string greater than zero with at most 10 integer digits and 10 decimal places', {
      field: 'rate',
    });
  }
  return toView(await upsertRate(em, input));
}

export async function deleteExchangeRate(em: Db, base: string, quote: string): Promise<void> {
  if (!(await deleteRate(em, base, quote))) throw new AppError('EXCHANGE_RATE_NOT_FOUND');
}

export async function listExchangeRates(em: Db): Promise<ExchangeRateView[]> {
  return (await selectRates(em)).map(toView);
}

/**
 * Looks up the rates for `from -> to` in both directions at once. Exported for
 * callers converting into many currencies (the checkout lists every gateway).
 */
export async function loadRates(em: Db, from: string, targets: readonly string[]): Promise<RateRow[]> {
  const others = targets.filter((t) => t !== from);
  if (others.length === 0) return [];
  return selectRatesBetween(em, from, others);
}

/**
 * Pure: converts with the direct rate when configured, else divides by the
 * inverse rate; null when neither exists.
 */
export function convertWith(rates: readonly RateRow[], amount: string, from: string, to: string): Conversion | null {
  if (from === to) return { amount, currency: to, rate: null, direction: 'none' };
  const direct = rates.find((r) => r.base === from && r.quote === to);
  if (direct) return { amount: convertAmount(amount, trimRate(direct.rate)), currency: to, rate: trimRate(direct.rate), direction: 'direct' };
  const inverse = rates.find((r) => r.base === to && r.quote === from);
  if (inverse) {
    const r = trimRate(inverse.rate);
    return { amount: convertAmountInverse(amount, r), currency: to, rate: invertRate(r), direction: 'inverse' };
  }
  return null;
}

/** Converts `amount` from one currency into another; no rate either way: CURRENCY_CONVERSION_FAILED. */
export async function convert(em: Db, amount: string, from: string, to: string): Promise<Conversion> {
  const result = convertWith(await loadRates(em, from, [to]), amount, from, to);
  if (!result) throw new AppError('CURRENCY_CONVERSION_FAILED', `No exchange rate between ${from} and ${to}`);
  return result;
}
