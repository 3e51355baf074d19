import { describe, expect, it } from 'vitest';
import { amountInputSchema, AMOUNT_FORMAT_MESSAGE, AMOUNT_POSITIVE_MESSAGE, AMOUNT_MAXIMUM_MESSAGE } from '../../contract/common/money.ts';
import { pageQuerySchema } from '../../contract/common/pagination.ts';

describe('amount input schema', () => {
  it.each([
    ['0.00', AMOUNT_POSITIVE_MESSAGE],
    ['-1.00', AMOUNT_POSITIVE_MESSAGE],
    ['1.5', AMOUNT_FORMAT_MESSAGE],
    ['1e3', AMOUNT_FORMAT_MESSAGE],
    ['abc', AMOUNT_FORMAT_MESSAGE],
    ['1,000.00', AMOUNT_FORMAT_MESSAGE],
    ['9999999999999.00', AMOUNT_MAXIMUM_MESSAGE],
  ])('rejects %s with one clear message', (input, message) => {
    const r = amountInputSchema.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.message)).toEqual([message]);
  });

  it('rejects JSON numbers', () => {
    expect(amountInputSchema.safeParse(10).success).toBe(false);
    expect(amountInputSchema.safeParse(10.5).success).toBe(false);
  });

  it.each(['0.01', '1250.00', '999999999999.99'])('accepts %s unchanged', (input) => {
    expect(amountInputSchema.parse(input)).toBe(input);
  });
});

describe('page query schema', () => {
  it('defaults to page 1, 20 per page', () => {
    expect(pageQuerySchema.parse({})).toEqual({ page: 1, per_page: 20 });
  });
  it.each([
    [{ page: '0' }, 'page'],
    [{ per_page: '0' }, 'per_page'],
    [{ per_page: '101' }, 'per_page'],
    [{ page: '1.5' }, 'page'],
    [{ page: 'abc' }, 'page'],
    [{ page: '1e1' }, 'page'],
  ])('rejects %o naming %s', (q, field) => {
    const r = pageQuerySchema.safeParse(q);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual([field]);
  });
  it('accepts the edges 1 and 100', () => {
    expect(pageQuerySchema.parse({ page: '1', per_page: '1' })).toEqual({ page: 1, per_page: 1 });
    expect(pageQuerySchema.parse({ per_page: '100' }).per_page).toBe(100);
  });
});

describe('a missing amount', () => {
  it('says it is required', () => {
    const r = amountInputSchema.optional().pipe(amountInputSchema).safeParse(undefined);
    expect(r.error?.issues[0]?.message).toBe('Amount is required');
  });
});
