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
    /** Senders the admin allows on top of the enabled gateways' official ones. */
    extraSenders: p.array(),
    positiveKeywords: p.array(),
    negativeKeywords: p.array(),
    checkIntervalHours: p.integer(),
    updatedAt: p.datetime().onCreate(() => new Date()),
  },
});

/** Counts changes to the enabled gateways' senders (one row). */
export const SmsSenderEpoch = defineEntity({
  name: 'SmsSenderEpoch',
  tableName: 'sms_sender_epoch',
  properties: {
    id: p.boolean().primary().default(true),
    version: p.integer().default(0),
    updatedAt: p.datetime().onCreate(() => new Date()),
  },
});

export type SmsFilterRulesEntity = InstanceType<typeof SmsFilterRules.class>;
