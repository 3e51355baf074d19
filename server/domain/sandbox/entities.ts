import { defineEntity, p } from '@mikro-orm/core';
import { Transaction } from '../payments/entities.ts';

export const sandboxSessionStatuses = ['open', 'approved', 'declined'] as const;
export type SandboxSessionStatus = (typeof sandboxSessionStatuses)[number];

/**
 * The sandbox gateway's own record of one transaction it was asked to collect
 * (sessions.ts): decided once, then told to the service by a signed callback.
 * The session's token is never stored, only its SHA-256. Mirrors migration 0006.
 */
export const SandboxSession = defineEntity({
  name: 'SandboxSession',
  tableName: 'sandbox_sessions',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    tokenHash: p.string().columnType('char(64)').unique('sandbox_sessions_token_hash_uniq'),
    transaction: () =>
      p.oneToOne(Transaction).owner().unique('sandbox_sessions_transaction_uniq').foreignKeyName('sandbox_sessions_transaction_id_fkey').deleteRule('no action').updateRule('no action'),
    trxId: p.string().length(32),
    amount: p.decimal().precision(14).scale(2).check('amount > 0'),
    currency: p.string().length(3),
    status: p.enum(sandboxSessionStatuses).default('open'),
    gatewayTrxId: p.string().length(100).nullable().unique('sandbox_sessions_gateway_trx_id_uniq'),
    declineReason: p.string().length(500).nullable(),
    expiresAt: p.datetime(),
    decidedAt: p.datetime().nullable(),
    callbackAttempts: p.integer().default(0),
    callbackLastStatus: p.integer().nullable(),
    callbackDeliveredAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
  },
  checks: [
    { name: 'sandbox_sessions_check', expression: "(status = 'open') = (decided_at IS NULL)" },
    { name: 'sandbox_sessions_check1', expression: "(status = 'open') = (gateway_trx_id IS NULL)" },
  ],
});

