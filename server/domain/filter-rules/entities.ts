import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';

/** The brand's SMS screening rules the companion app applies before forwarding (absent: the defaults, written on first read). */
export const SmsFilterRules = defineEntity({
  name: 'SmsFilterRules',
  tableName: 'sms_filter_rules',
  properties: {
    brand: () => p.oneToOne(Brand).primary().owner().deleteRule('cascade').updateRule('no action').foreignKeyName('sms_filter_rules_brand_id_fkey'),
    /** Bumped by every change, so the app can tell whether its copy is current. */
    version: p.integer().default(1),
    /** Senders the admin allows on top of the enabled gateways' official ones. */
    extraSenders: p.array(),
    positiveKeywords: p.array(),
    negativeKeywords: p.array(),
    checkIntervalHours: p.integer(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  checks: [
    { name: 'sms_filter_rules_check_interval_hours_check', expression: 'check_interval_hours >= 1 AND check_interval_hours <= 168' },
    { name: 'sms_filter_rules_version_check', expression: 'version >= 1' },
  ],
});

/** Counts changes to the enabled gateways' senders (one row). */
export const SmsSenderEpoch = defineEntity({
  name: 'SmsSenderEpoch',
  tableName: 'sms_sender_epoch',
  properties: {
    id: p.boolean().primary().default(true),
    version: p.integer().default(0),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  checks: [
    { name: 'sms_sender_epoch_id_check', expression: 'id' },
    { name: 'sms_sender_epoch_version_check', expression: 'version >= 0' },
  ],
});

