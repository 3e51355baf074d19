import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';

/** The brand's SMS screening rules the companion app applies before forwarding. */
export const SmsFilterRules = defineEntity({
  name: 'SmsFilterRules',
  tableName: 'sms_filter_rules',
  properties: {
    brand: () => p.oneToOne(Brand).primary().owner(),
    /** Bumped by every change, so the app can tell whether its copy is current. */
    version: p.integer().default(1),
    allowedSenders: p.array(),
    positiveKeywords: p.array(),
    negativeKeywords: p.array(),
    checkIntervalHours: p.integer(),
    updatedAt: p.datetime().onCreate(() => new Date()),
  },
});

export type SmsFilterRulesEntity = InstanceType<typeof SmsFilterRules.class>;
