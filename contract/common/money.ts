import { z } from 'zod';

/** Largest amount the service stores: 12 integer digits (numeric(14,2)). */
export const MAX_AMOUNT_INTEGER_DIGITS = 12;

export const AMOUNT_FORMAT_MESSAGE = 'Amount must be a decimal string with exactly two decimal places, e.g. "1250.00"';
export const AMOUNT_POSITIVE_MESSAGE = 'Amount must be greater than zero';
export const AMOUNT_MAXIMUM_MESSAGE = 'Amount exceeds maximum';

/**
 * A money amount as the API takes it: a string with exactly two decimals.
 * Never a JSON number (binary floats lose cents). `"-1.00"` and `"0.00"` parse as
 * amounts so the caller gets the documented message, `Amount must be greater than zero`.
 */
export const amountInputSchema = z
  .string({ error: (issue) => (issue.input === undefined ? 'Amount is required' : AMOUNT_FORMAT_MESSAGE) })
  .regex(/^-?[0-9]+\.[0-9]{2}$/, { message: AMOUNT_FORMAT_MESSAGE, abort: true })
  .refine((s) => !s.startsWith('-') && /[1-9]/.test(s), AMOUNT_POSITIVE_MESSAGE)
  .refine((s) => s.replace(/^0+(?=\d)/, '').split('.')[0]!.length <= MAX_AMOUNT_INTEGER_DIGITS, AMOUNT_MAXIMUM_MESSAGE)
  .describe('Decimal amount as a string with exactly two decimal places, greater than zero.')
  .meta({ examples: ['1250.00'] });

/** An amount as the API returns it: non-negative, exactly two decimals. */
export const amountSchema = z
  .string()
  .regex(/^[0-9]+\.[0-9]{2}$/)
  .describe('Decimal amount as a string with exactly two decimal places.')
  .meta({ examples: ['1250.00'] });

/** ISO 4217 code, upper case. */
export const currencySchema = z
  .string()
  .regex(/^[A-Z]{3}$/, 'Currency must be a three-letter ISO 4217 code in upper case, e.g. "BDT"')
  .describe('ISO 4217 currency code.')
  .meta({ examples: ['BDT'] });
