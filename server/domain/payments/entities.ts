import { defineEntity, p } from '@mikro-orm/core';
import { modes, intentStatuses, transactionStatuses } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
import { Customer } from '../customers/entities.ts';
import { Invoice } from '../invoices/entities.ts';
import { Gateway } from '../gateways/entities.ts';
import { WalletAccount } from '../wallet-accounts/entities.ts';
export type { IntentStatus, TransactionStatus } from '../../../contract/vocabulary.ts';
import { PaymentLink } from '../payment-links/entities.ts';

/** Statuses from which a transaction can still complete, fail or expire. */
export const OPEN_TRANSACTION_STATUSES = ['pending', 'processing', 'awaiting_verification'] as const;

/**
 * What a merchant asked to be paid; `uuid` is the public payment id. Mirrors
 * migrations 0003, 0010 (mode), 0016 (canceled) and 0018 (payment links); the
 * triggers of 0010 (mode never changes) stay in the migrations.
 */
export const PaymentIntent = defineEntity({
  name: 'PaymentIntent',
  tableName: 'payment_intents',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    uuid: p.uuid().unique('payment_intents_uuid_key'),
    brand: () => p.manyToOne(Brand).foreignKeyName('payment_intents_brand_id_fkey').deleteRule('no action').updateRule('no action'),
    /** Given by the code that creates the intent; its transactions, refunds and events inherit it (trigger). */
    mode: p.enum(modes).default('live'),
    amount: p.decimal().precision(14).scale(2).check('amount > 0'),
    currency: p.string().length(3).check("currency ~ '^[A-Z]{3}$'"),
    reference: p.string().length(100).nullable(),
    customer: () => p.manyToOne(Customer).nullable().foreignKeyName('payment_intents_customer_id_fkey').deleteRule('no action').updateRule('no action'),
    /** The link this payment was made from, if any. */
    paymentLink: () => p.manyToOne(PaymentLink).nullable().foreignKeyName('payment_intents_payment_link_id_fkey').deleteRule('no action').updateRule('no action'),
    /** The invoice this payment pays (part of), if any: its completion adds to the invoice's amount paid (invoices/settle.ts). */
    invoice: () => p.manyToOne(Invoice).nullable().foreignKeyName('payment_intents_invoice_id_fkey').deleteRule('no action').updateRule('no action'),
    metadata: p.json<Record<string, unknown>>().defaultRaw("'{}'::jsonb").check("jsonb_typeof(metadata) = 'object'"),
    successUrl: p.string().length(2048).nullable(),
    cancelUrl: p.string().length(2048).nullable(),
    /** OwnPay's per-payment webhook URL; events go there only when it is one of the brand's registered endpoint URLs. */
    callbackUrl: p.string().length(2048).nullable(),
    status: p.enum(intentStatuses).default('pending'),
    expiresAt: p.datetime(),
    completedAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    canceledAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  checks: [{ name: 'payment_intents_canceled_at_check', expression: "(status = 'canceled') = (canceled_at IS NOT NULL)" }],
  indexes: [
    { name: 'payment_intents_brand_created_idx', expression: 'CREATE INDEX payment_intents_brand_created_idx ON payment_intents (brand_id, created_at DESC)' },
    // Merchant lists: one mode of one brand, newest first, id as tie-break.
    {
      name: 'payment_intents_brand_mode_created_idx',
      expression: 'CREATE INDEX payment_intents_brand_mode_created_idx ON payment_intents (brand_id, mode, created_at DESC, id DESC)',
    },
    { name: 'payment_intents_customer_idx', properties: ['customer'], where: 'customer_id IS NOT NULL' },
    // The expiry job scans only intents still open.
    { name: 'payment_intents_due_idx', properties: ['expiresAt'], where: "status = 'pending'" },
    { name: 'payment_intents_invoice_idx', properties: ['invoice'], where: 'invoice_id IS NOT NULL' },
    {
      name: 'payment_intents_link_idx',
      expression: 'CREATE INDEX payment_intents_link_idx ON payment_intents (payment_link_id, id DESC) WHERE payment_link_id IS NOT NULL',
    },
  ],
});

/**
 * One attempt to pay an intent on one gateway. Amount and currency are as charged
 * on the gateway (after conversion); `exchangeRate` is the rate used (null when none).
 * Mirrors migrations 0003, 0010, 0011, 0012 and 0018; its triggers (mode from the
 * intent, sms_amount defaulting to amount, mode never changes) stay in the migrations.
 */
export const Transaction = defineEntity({
  name: 'Transaction',
  tableName: 'transactions',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).foreignKeyName('transactions_brand_id_fkey').deleteRule('no action').updateRule('no action'),
    /** Always its intent's (a trigger sets it, whatever the INSERT says). */
    mode: p.enum(modes).default('live'),
    intent: () => p.manyToOne(PaymentIntent).foreignKeyName('transactions_intent_id_fkey').deleteRule('no action').updateRule('no action'),
    trxId: p.string().length(32).unique('transactions_trx_id_uniq'),
    gateway: () => p.manyToOne(Gateway).foreignKeyName('transactions_gateway_id_fkey').deleteRule('no action').updateRule('no action'),
    method: p.string().length(50),
    /** The brand's wallet account the customer was told to pay into (manual gateways with accounts); null: the gateway's own number. */
    walletAccount: () => p.manyToOne(WalletAccount).nullable().foreignKeyName('transactions_wallet_account_id_fkey').deleteRule('no action').updateRule('no action'),
    gatewayTrxId: p.string().length(100).nullable(),
    amount: p.decimal().precision(14).scale(2).check('amount > 0'),
    currency: p.string().length(3).check("currency ~ '^[A-Z]{3}$'"),
    fee: p.decimal().precision(14).scale(2).default(0).check('fee >= 0'),
    /** What the wallet SMS must carry: the amount, or amount + fee when the gateway's customer pays the fee (fixed at start). */
    smsAmount: p.decimal().precision(14).scale(2),
    exchangeRate: p.decimal().precision(20).scale(10).nullable().check('exchange_rate IS NULL OR exchange_rate > 0'),
    status: p.enum(transactionStatuses),
    senderNumberEncrypted: p.text().nullable(),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2).check('pii_v IN (1, 2)'),
    failureReason: p.string().length(500).nullable(),
    completionSource: p.string().length(30).nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
  checks: [
    { name: 'transactions_check', expression: "(status = 'completed') = (completed_at IS NOT NULL)" },
    { name: 'transactions_sms_amount_check', expression: 'sms_amount = amount OR sms_amount = (amount + fee)' },
  ],
  uniques: [
    // One gateway transaction id per brand and gateway, whatever its case (customers retype ids in either case).
    {
      name: 'transactions_gateway_trx_id_uniq',
      expression:
        'CREATE UNIQUE INDEX transactions_gateway_trx_id_uniq ON transactions (brand_id, gateway_id, upper(gateway_trx_id)) WHERE gateway_trx_id IS NOT NULL',
    },
    // ...and completes one transaction, ever, across brands.
    {
      name: 'transactions_gateway_trx_id_completed_uniq',
      expression:
        "CREATE UNIQUE INDEX transactions_gateway_trx_id_completed_uniq ON transactions (gateway_id, upper(gateway_trx_id)) WHERE gateway_trx_id IS NOT NULL AND status = 'completed'",
    },
    // At most one live (open or completed) transaction per intent: paying twice races here.
    {
      name: 'transactions_one_live_per_intent',
      properties: ['intent'],
      where: "status IN ('pending', 'processing', 'awaiting_verification', 'completed')",
    },
  ],
  indexes: [
    {
      name: 'transactions_intent_created_idx',
      expression: 'CREATE INDEX transactions_intent_created_idx ON transactions (intent_id, created_at DESC, id DESC)',
    },
    { name: 'transactions_brand_created_idx', expression: 'CREATE INDEX transactions_brand_created_idx ON transactions (brand_id, created_at DESC)' },
    { name: 'transactions_brand_status_idx', properties: ['brand', 'status'] },
    // A wallet account's use today (the checkout's choice of account, wallet-accounts/queries.ts) and whether it was paid into.
    { name: 'transactions_wallet_account_idx', properties: ['walletAccount', 'createdAt'], where: 'wallet_account_id IS NOT NULL' },
    // SMS matching: the brand's open transactions on a gateway within a time window, or with the amount an SMS shows.
    {
      name: 'transactions_open_by_gateway_idx',
      properties: ['brand', 'gateway', 'createdAt'],
      where: "status IN ('pending', 'awaiting_verification')",
    },
    { name: 'transactions_open_by_sms_amount_idx', properties: ['brand', 'smsAmount'], where: "status IN ('pending', 'awaiting_verification')" },
    // Refund lookups by the gateway's reference.
    {
      name: 'transactions_brand_gateway_trx_idx',
      expression:
        'CREATE INDEX transactions_brand_gateway_trx_idx ON transactions (brand_id, upper(gateway_trx_id)) WHERE gateway_trx_id IS NOT NULL',
    },
    // Rows still in the first personal-data format (domain/pii/reencrypt.ts).
    { name: 'transactions_pii_v1_idx', properties: ['id'], where: 'pii_v = 1' },
  ],
});

