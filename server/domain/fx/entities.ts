import { defineEntity, p } from '@mikro-orm/core';

/** 1 `base` = `rate` `quote`; the inverse direction is derived when only one row exists. */
export const ExchangeRate = defineEntity({
  name: 'ExchangeRate',
  tableName: 'exchange_rates',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    base: p.string().length(3),
    quote: p.string().length(3),
    rate: p.decimal().precision(20).scale(10),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type ExchangeRateEntity = InstanceType<typeof ExchangeRate.class>;
