import { defineEntity, p } from '@mikro-orm/core';
import { feePayers, gatewayTypes, type SmsDirection } from '../../../contract/vocabulary.ts';
export type { FeePayer, GatewayType } from '../../../contract/vocabulary.ts';

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
 * admin panel manages one list for the whole service). Mirrors migrations 0003,
 * 0013 (review_above) and 0018 (fee_payer).
 */
export const Gateway = defineEntity({
  name: 'Gateway',
  tableName: 'gateways',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    code: p.string().length(50).unique('gateways_code_key').check("code ~ '^[a-z0-9][a-z0-9_-]*$'"),
    name: p.string().length(100),
    type: p.enum(gatewayTypes),
    methods: p.array().check('cardinality(methods) >= 1'),
    /** The first currency is the one amounts are converted into when the intent's is not listed. */
    currencies: p.array().check('cardinality(currencies) >= 1'),
    minAmount: p.decimal().precision(14).scale(2).defaultRaw('0.01').check('min_amount > 0'),
    maxAmount: p.decimal().precision(14).scale(2).nullable(),
    /** SMS matching sends amounts above it to review, even on certain evidence. */
    reviewAbove: p.decimal().precision(14).scale(2).nullable().check('review_above > 0'),
    feePercent: p.decimal().precision(7).scale(4).default(0).check('fee_percent >= 0 AND fee_percent < 100'),
    feeFixed: p.decimal().precision(14).scale(2).default(0).check('fee_fixed >= 0'),
    feePayer: p.enum(feePayers).default('merchant'),
    receivingAccount: p.string().length(100).nullable(),
    instructions: p.text().nullable(),
    enabled: p.boolean().default(true),
    smsSenders: p.array().defaultRaw("'{}'::text[]"),
    smsTemplates: p.json<StoredSmsTemplate[]>().defaultRaw("'[]'::jsonb").check("jsonb_typeof(sms_templates) = 'array'"),
    sortOrder: p.integer().default(0),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  checks: [{ name: 'gateways_check', expression: 'max_amount IS NULL OR max_amount >= min_amount' }],
  // The checkout and intent creation read the enabled gateways in this order.
  indexes: [{ name: 'gateways_enabled_idx', properties: ['sortOrder', 'id'], where: 'enabled' }],
});

