import { defineEntity, p } from '@mikro-orm/core';
import { modes, refundStatuses } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
import { Transaction } from '../payments/entities.ts';
export type { RefundStatus } from '../../../contract/vocabulary.ts';

/**
 * Money returned on a completed transaction, in the transaction's currency.
 * Mirrors migrations 0003 and 0010 (its triggers, mode from the transaction and
 * mode never changes, stay in the migrations).
 */
export const Refund = defineEntity({
  name: 'Refund',
  tableName: 'refunds',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    uuid: p.uuid().unique('refunds_uuid_key'),
    brand: () => p.manyToOne(Brand).foreignKeyName('refunds_brand_id_fkey').deleteRule('no action').updateRule('no action'),
    /** Always its transaction's (a trigger sets it, whatever the INSERT says). */
    mode: p.enum(modes).default('live'),
    transaction: () => p.manyToOne(Transaction).foreignKeyName('refunds_transaction_id_fkey').deleteRule('no action').updateRule('no action'),
    amount: p.decimal().precision(14).scale(2).check('amount > 0'),
    currency: p.string().length(3),
    reason: p.string().length(500).nullable(),
    status: p.enum(refundStatuses).default('pending'),
    failureReason: p.string().length(500).nullable(),
    /** For a refund paid out by hand: the wallet's transaction id of the money sent back, as the operator typed it. */
    completionReference: p.string().length(100).nullable(),
    /** The operator's note when completing by hand. */
    completionNote: p.string().length(500).nullable(),
    processedAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  checks: [{ name: 'refunds_check', expression: "(status = 'pending') = (processed_at IS NULL)" }],
  indexes: [
    {
      name: 'refunds_transaction_created_idx',
      expression: 'CREATE INDEX refunds_transaction_created_idx ON refunds (transaction_id, created_at DESC, id DESC)',
    },
    { name: 'refunds_brand_created_idx', expression: 'CREATE INDEX refunds_brand_created_idx ON refunds (brand_id, created_at DESC, id DESC)' },
    {
      name: 'refunds_brand_status_created_idx',
      expression: 'CREATE INDEX refunds_brand_status_created_idx ON refunds (brand_id, status, created_at DESC, id DESC)',
    },
    {
      name: 'refunds_brand_mode_created_idx',
      expression: 'CREATE INDEX refunds_brand_mode_created_idx ON refunds (brand_id, mode, created_at DESC, id DESC)',
    },
  ],
});

