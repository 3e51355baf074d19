import { AppError } from '../../../contract/common/errors.ts';
import { compareMoney, MoneyDecimal, toMoney } from '../money/decimal.ts';
import type { StoredAdjustment, StoredInvoiceLine } from './entities.ts';

/**
 * The one rule for an invoice's amounts, applied once when it is written (the
 * stored numbers are what every page, PDF, event and payment reads):
 * each line is quantity × unit price, rounded half-up to cents; the subtotal is
 * the sum of the rounded lines (so the lines shown add up to it); the discount
 * is a fixed amount, at most the subtotal; the tax is `rate` percent of
 * (subtotal − discount), rounded half-up once; total = subtotal − discount + tax.
 */
export interface TotalsInput {
  lines: ReadonlyArray<{ description: string; quantity: string; unit_price: string }>;
  discount?: { description?: string; amount: string } | null;
  tax?: { description?: string; rate: string } | null;
}

export interface Totals {
  lines: StoredInvoiceLine[];
  discount: StoredAdjustment | null;
  tax: StoredAdjustment | null;
  subtotal: string;
  total: string;
}

export function computeTotals(input: TotalsInput): Totals {
  const lines = input.lines.map((l) => ({
    description: l.description,
    quantity: new MoneyDecimal(l.quantity).toString(),
    unit_price: l.unit_price,
    amount: toMoney(new MoneyDecimal(l.quantity).times(l.unit_price)),
  }));
  const subtotal = toMoney(lines.reduce((sum, l) => sum.plus(l.amount), new MoneyDecimal(0)));
  let discount: StoredAdjustment | null = null;
  if (input.discount) {
    if (compareMoney(input.discount.amount, subtotal) > 0) {
      throw new AppError('VALIDATION_ERROR', `The discount must not exceed the subtotal (${subtotal})`, { field: 'discount.amount' });
    }
    discount = { description: input.discount.description ?? 'Discount', rate: null, amount: toMoney(input.discount.amount) };
  }
  const taxable = new MoneyDecimal(subtotal).minus(discount?.amount ?? '0');
  let tax: StoredAdjustment | null = null;
  if (input.tax) {
    const rate = new MoneyDecimal(input.tax.rate).toString();
    tax = { description: input.tax.description ?? 'Tax', rate, amount: toMoney(taxable.times(rate).dividedBy(100)) };
  }
  const total = toMoney(taxable.plus(tax?.amount ?? '0'));
  if (compareMoney(total, '0') <= 0) throw new AppError('VALIDATION_ERROR', 'The invoice total must be greater than zero', { field: 'lines' });
  if (total.split('.')[0]!.length > 12) throw new AppError('VALIDATION_ERROR', 'Amount exceeds maximum', { field: 'lines' });
  return { lines, discount, tax, subtotal, total };
}

/** What is left to pay: total − paid, never below zero (an overpayment leaves nothing due). */
export function amountRemaining(total: string, paid: string): string {
  return compareMoney(paid, total) >= 0 ? '0.00' : toMoney(new MoneyDecimal(total).minus(paid));
}

/** `INV-0001`: four digits at least, more once a brand passes 9999. */
export function invoiceNumber(n: number): string {
  return `INV-${String(n).padStart(4, '0')}`;
}
