import { defineEntity, p } from '@mikro-orm/core';
import { feePayers, gatewayTypes, type SmsDirection } from '../../../contract/admin/gateways.ts';
export type { FeePayer, GatewayType } from '../../../contract/admin/gateways.ts';

/** A stored SMS template; validated with `compileTemplate` before it is saved. */
export interface StoredSmsTemplate {
  pattern: string;
  flags: string;
  /** Money in (default, also for templates saved before directions existed) or out: a money-out template only feeds the balance chain (docs/matching.md). */
  direction?: SmsDirection;
  kind?: string;
}

/**
 * A payment gateway. Global: every brand is offered every enabled gateway (the
 * admin panel manages one list for the whole service).
 */
export const Gateway = defineEntity({
  name: 'Gateway',
  tableName: 'gateways',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    code: p.string().length(50).unique(),
    name: p.string().length(100),
    type: p.enum(gatewayTypes),
    methods: p.array(),
    /** The first currency is the one amounts are converted into when the intent's is not listed. */
    currencies: p.array(),
    minAmount: p.decimal().precision(14).scale(2),
    maxAmount: p.decimal().precision(14).scale(2).nullable(),
    /** SMS matching sends amounts above it to review, even on certain evidence. */
    reviewAbove: p.decimal().precision(14).scale(2).nullable(),
    feePercent: p.decimal().precision(7).scale(4),
    feeFixed: p.decimal().precision(14).scale(2),
    feePayer: p.enum(feePayers).default('merchant'),
    receivingAccount: p.string().length(100).nullable(),
    instructions: p.text().nullable(),
    enabled: p.boolean().default(true),
    smsSenders: p.array(),
    smsTemplates: p.json<StoredSmsTemplate[]>(),
    sortOrder: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type GatewayEntity = InstanceType<typeof Gateway.class>;
