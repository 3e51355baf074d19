import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { currencySchema, ok, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions } from './shared.ts';

const c = initContract();

export const exchangeRateSchema = z
  .object({
    base: currencySchema,
    quote: currencySchema,
    rate: z.string().describe('1 `base` = `rate` `quote`, as a decimal string (up to 10 places).'),
    updated_at: timestampSchema,
  })
  .meta({ id: 'AdminExchangeRate' });

const pairPath = z.object({
  base: currencySchema.describe('Currency converted from.'),
  quote: currencySchema.describe('Currency converted into.'),
});

export const setExchangeRateBodySchema = z
  .strictObject({
    rate: z
      .string()
      .regex(/^(?:0|[1-9]\d{0,9})(?:\.\d{1,10})?$/, 'Must be a decimal string with at most 10 integer digits and 10 decimal places, e.g. "110.25"')
      .refine((s) => /[1-9]/.test(s), 'Must be greater than zero')
      .describe('1 `base` = `rate` `quote`. A decimal string, never a JSON number (binary floats lose digits).'),
  })
  .meta({ id: 'AdminSetExchangeRateRequest' });

export const adminExchangeRatesContract = c.router(
  {
    set: {
      method: 'PUT',
      path: '/exchange-rates/:base/:quote',
      summary: 'Set an exchange rate',
      description:
        'Creates or replaces the rate of one ordered pair. When only the other direction is configured, conversions divide by it exactly. New payments use the new rate at once; started ones keep theirs. Recorded in the audit log.',
      pathParams: pairPath,
      body: setExchangeRateBodySchema,
      responses: { 200: ok(exchangeRateSchema) },
      metadata: adminMeta('Exchange rates'),
    },
    list: {
      method: 'GET',
      path: '/exchange-rates',
      summary: 'List exchange rates',
      description: 'Every configured rate, ordered by base then quote currency. A conversion uses the direct pair, else the inverse of the opposite pair.',
      responses: { 200: ok(z.array(exchangeRateSchema)) },
      metadata: adminMeta('Exchange rates'),
    },
    delete: {
      method: 'DELETE',
      path: '/exchange-rates/:base/:quote',
      summary: 'Delete an exchange rate',
      description: 'Payments needing this conversion are refused afterwards (`CURRENCY_CONVERSION_FAILED`) unless the inverse pair exists. Recorded in the audit log.',
      pathParams: pairPath,
      responses: { 200: ok(exchangeRateSchema.describe('The rate as it was before deletion.')) },
      metadata: adminMeta('Exchange rates', ['EXCHANGE_RATE_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
