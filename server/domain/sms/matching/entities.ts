import { defineEntity, p } from '@mikro-orm/core';
import { modes } from '../../../../contract/vocabulary.ts';
import { Brand } from '../../brands/entities.ts';
import { Device } from '../../devices/entities.ts';
import { Gateway } from '../../gateways/entities.ts';
import { SmsRecord } from '../intake/entities.ts';

/**
 * The head of one balance chain (per device and wallet, balance-chain.ts):
 * its row lock serialises the chain checks of one phone's wallet.
 */
export const SmsBalanceChain = defineEntity({
  name: 'SmsBalanceChain',
  tableName: 'sms_balance_chains',
  properties: {
    device: () => p.manyToOne(Device).primary().deleteRule('cascade').foreignKeyName('sms_balance_chains_device_id_fkey'),
    walletKey: p.string().length(64).primary(),
    lastRecord: () => p.manyToOne(SmsRecord).nullable().deleteRule('no action').foreignKeyName('sms_balance_chains_last_record_id_fkey'),
    lastBalance: p.decimal('string').precision(16).scale(2).nullable(),
    lastSmsTime: p.datetime().nullable(),
    broken: p.boolean().default(false),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});

/** One episode of an official sender's SMS suddenly not parsing (format-alarm.ts); open while `clearedAt` is null. */
export const SmsFormatAlarm = defineEntity({
  name: 'SmsFormatAlarm',
  tableName: 'sms_format_alarms',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('sms_format_alarms_brand_id_fkey'),
    mode: p.enum(modes),
    gateway: () => p.manyToOne(Gateway).deleteRule('cascade').foreignKeyName('sms_format_alarms_gateway_id_fkey'),
    sender: p.string().length(64),
    windowMinutes: p.integer(),
    unparsed: p.integer(),
    total: p.integer(),
    share: p.decimal('string').precision(5).scale(4),
    baselineShare: p.decimal('string').precision(5).scale(4),
    raisedAt: p.datetime().defaultRaw('now()'),
    clearedAt: p.datetime().nullable(),
  },
  uniques: [{ name: 'sms_format_alarms_one_open', properties: ['brand', 'mode', 'gateway', 'sender'], where: 'cleared_at IS NULL' }],
  indexes: [{ name: 'sms_format_alarms_raised_idx', columns: [{ name: 'raised_at', sort: 'DESC' }] }],
  checks: [
    { name: 'sms_format_alarms_check', expression: 'total >= unparsed' },
    { name: 'sms_format_alarms_unparsed_check', expression: 'unparsed >= 0' },
  ],
});
