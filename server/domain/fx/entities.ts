import { defineEntity, p } from '@mikro-orm/core';

/**
 * 1 `base` = `rate` `quote`; the inverse direction is derived when only one row
 * exists. One row per ordered pair. Mirrors migration 0003.
 */
export const ExchangeRate = defineEntity({
  name: 'ExchangeRate',
  tableName: 'exchange_rates',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    base: p.string().length(3).check("base ~ '^[A-Z]{3}$'"),
    quote: p.string().length(3).check("quote ~ '^[A-Z]{3}$'"),
    rate: p.decimal().precision(20).scale(10).check('rate > 0'),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  checks: [{ name: 'exchange_rates_check', expression: 'base <> quote' }],
  uniques: [{ name: 'exchange_rates_pair_uniq', properties: ['base', 'quote'] }],
});

