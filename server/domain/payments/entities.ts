import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { Customer } from '../customers/entities.ts';
import { Gateway } from '../gateways/entities.ts';
import { intentStatuses, transactionStatuses } from '../../../contract/merchant/payments.ts';
export type { IntentStatus, TransactionStatus } from '../../../contract/merchant/payments.ts';

/** Statuses from which a transaction can still complete, fail or expire. */
export const OPEN_TRANSACTION_STATUSES = ['pending', 'processing', 'awaiting_verification'] as const;

/** What a merchant asked to be paid; `uuid` is the public payment id. */
export const PaymentIntent = defineEntity({
  name: 'PaymentIntent',
  tableName: 'payment_intents',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique(),
    brand: () => p.manyToOne(Brand),
    amount: p.decimal().precision(14).scale(2),
    currency: p.string().length(3),
    reference: p.string().length(100).nullable(),
    customer: () => p.manyToOne(Customer).nullable(),
    metadata: p.json<Record<string, unknown>>(),
    successUrl: p.string().length(2048).nullable(),
    cancelUrl: p.string().length(2048).nullable(),
    status: p.enum(intentStatuses).default('pending'),
    expiresAt: p.datetime(),
    completedAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    canceledAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

/**
 * One attempt to pay an intent on one gateway. Amount and currency are as charged
 * on the gateway (after conversion); `exchangeRate` is the rate used (null when none).
 */
export const Transaction = defineEntity({
  name: 'Transaction',
  tableName: 'transactions',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand),
    intent: () => p.manyToOne(PaymentIntent),
    trxId: p.string().length(32).unique(),
    gateway: () => p.manyToOne(Gateway),
    method: p.string().length(50),
    gatewayTrxId: p.string().length(100).nullable(),
    amount: p.decimal().precision(14).scale(2),
    currency: p.string().length(3),
    fee: p.decimal().precision(14).scale(2),
    /** What the wallet SMS must carry: the amount, or amount + fee when the gateway's customer pays the fee (fixed at start). */
    smsAmount: p.decimal().precision(14).scale(2),
    exchangeRate: p.decimal().precision(20).scale(10).nullable(),
    status: p.enum(transactionStatuses),
    senderNumberEncrypted: p.text().nullable(),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2),
    failureReason: p.string().length(500).nullable(),
    completionSource: p.string().length(30).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
});

export type PaymentIntentEntity = InstanceType<typeof PaymentIntent.class>;
export type TransactionEntity = InstanceType<typeof Transaction.class>;
