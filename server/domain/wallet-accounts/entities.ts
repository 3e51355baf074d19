import { defineEntity, p } from '@mikro-orm/core';
import { walletAccountTypes } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
import { Device } from '../devices/entities.ts';
import { Gateway } from '../gateways/entities.ts';
export type { WalletAccountType } from '../../../contract/vocabulary.ts';

/**
 * A brand's own receiving account on a manual gateway (docs/matching.md,
 * "Wallet accounts"): the number its customers send money to, and the phone
 * and SIM slot that receive its wallet's SMS. A gateway is the platform's
 * template (senders, templates, fees); the accounts are the brand's.
 */
export const WalletAccount = defineEntity({
  name: 'WalletAccount',
  tableName: 'wallet_accounts',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('wallet_accounts_brand_id_fkey'),
    gateway: () => p.manyToOne(Gateway).deleteRule('cascade').foreignKeyName('wallet_accounts_gateway_id_fkey'),
    /** As the customer types it into the wallet app: a national number (01XXXXXXXXX), a merchant or agent number. */
    number: p.string().length(32),
    accountType: p.enum(walletAccountTypes).default('personal'),
    label: p.string().length(100).nullable(),
    /** At most this much (amount to send) is assigned to it per day of the brand's time zone; null: no limit. */
    dailyLimit: p.decimal().precision(14).scale(2).nullable().check('daily_limit > 0'),
    enabled: p.boolean().default(true),
    /** The phone that receives this account's SMS; null: any phone of the brand (as before accounts existed). */
    device: () => p.manyToOne(Device).nullable().deleteRule('set null').foreignKeyName('wallet_accounts_device_id_fkey'),
    /** The SIM slot (0-based) of that phone; null: any slot of it. */
    simSlot: p.smallint().nullable().check('sim_slot >= 0 AND sim_slot <= 7'),
    /** Round robin: the account shown least recently is chosen first. */
    lastAssignedAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  uniques: [{ name: 'wallet_accounts_brand_gateway_number_key', properties: ['brand', 'gateway', 'number'] }],
  checks: [{ name: 'wallet_accounts_slot_needs_device_check', expression: 'sim_slot IS NULL OR device_id IS NOT NULL' }],
  indexes: [
    { name: 'wallet_accounts_brand_gateway_idx', properties: ['brand', 'gateway'] },
    { name: 'wallet_accounts_device_idx', properties: ['device'], where: 'device_id IS NOT NULL' },
  ],
});

