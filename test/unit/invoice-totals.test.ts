import { describe, expect, it } from 'vitest';
import { amountRemaining, computeTotals, invoiceNumber } from '../../server/domain/invoices/totals.ts';
import { scriptRuns } from '../../server/domain/invoices/pdf.ts';

/** The one totals rule of invoices (server/domain/invoices/totals.ts), from a table of cases worked out by hand. */

const line = (quantity: string, unit_price: string) => ({ description: 'x', quantity, unit_price });

describe('computeTotals', () => {
  it.each([
    // lines, discount, tax rate → subtotal, discount, tax, total
    { lines: [line('1', '100.00')], discount: null, rate: null, subtotal: '100.00', tax: null, total: '100.00' },
    { lines: [line('3', '0.10')], discount: null, rate: null, subtotal: '0.30', tax: null, total: '0.30' },
    // Each line is rounded half-up to cents, and the subtotal is the sum of the rounded lines.
    { lines: [line('0.5', '0.05'), line('0.5', '0.05')], discount: null, rate: null, subtotal: '0.06', tax: null, total: '0.06' },
    { lines: [line('1.125', '10.00')], discount: null, rate: null, subtotal: '11.25', tax: null, total: '11.25' },
    { lines: [line('3', '1333.33')], discount: '100.00', rate: '7.5', subtotal: '3999.99', tax: '292.50', total: '4192.49' },
    // Tax is on (subtotal − discount), rounded once: 15 % of 0.03 = 0.0045 → 0.00.
    { lines: [line('1', '0.03')], discount: null, rate: '15', subtotal: '0.03', tax: '0.00', total: '0.03' },
    { lines: [line('1', '0.10')], discount: null, rate: '15', subtotal: '0.10', tax: '0.02', total: '0.12' },
    { lines: [line('2', '999999999.99')], discount: null, rate: null, subtotal: '1999999999.98', tax: null, total: '1999999999.98' },
  ])('$lines.length line(s), discount $discount, tax $rate → $total', ({ lines, discount, rate, subtotal, tax, total }) => {
    const t = computeTotals({ lines, discount: discount ? { amount: discount } : null, tax: rate ? { rate } : null });
    expect([t.subtotal, t.tax?.amount ?? null, t.total]).toEqual([subtotal, tax, total]);
    if (discount) expect(t.discount).toEqual({ description: 'Discount', rate: null, amount: discount });
  });

  it('refuses a discount above the subtotal and a total of zero, naming the field', () => {
    expect(() => computeTotals({ lines: [line('1', '10.00')], discount: { amount: '10.01' } })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'discount.amount' }));
    expect(() => computeTotals({ lines: [line('1', '10.00')], discount: { amount: '10.00' } })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'lines' }));
  });

  it('remaining never goes below zero; numbers have four digits at least', () => {
    expect([amountRemaining('100.00', '40.50'), amountRemaining('100.00', '100.00'), amountRemaining('100.00', '120.00')]).toEqual(['59.50', '0.00', '0.00']);
    expect([invoiceNumber(1), invoiceNumber(42), invoiceNumber(12345)]).toEqual(['INV-0001', 'INV-0042', 'INV-12345']);
  });
});

describe('scriptRuns (PDF fonts)', () => {
  it('cuts text into Bengali and other runs; spaces between Bengali words stay Bengali, punctuation goes Latin', () => {
    expect(scriptRuns('চাল (Rice) ২৫ কেজি')).toEqual([
      { bengali: true, text: 'চাল ' },
      { bengali: false, text: '(Rice) ' },
      { bengali: true, text: '২৫ কেজি' },
    ]);
  });
});
