import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { Transaction } from '../payments/entities.ts';
import { refundStatuses } from '../../../contract/merchant/refunds.ts';
export type { RefundStatus } from '../../../contract/merchant/refunds.ts';

/** Money returned on a completed transaction, in the transaction's currency. */
export const Refund = defineEntity({
  name: 'Refund',
  tableName: 'refunds',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique(),
    brand: () => p.manyToOne(Brand),
    transaction: () => p.manyToOne(Transaction),
    amount: p.decimal().precision(14).scale(2),
    currency: p.string().length(3),
    reason: p.string().length(500).nullable(),
    status: p.enum(refundStatuses).default('pending'),
    failureReason: p.string().length(500).nullable(),
    processedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type RefundEntity = InstanceType<typeof Refund.class>;
