import { defineEntity, p } from '@mikro-orm/core';
import { modes, reconciliationCategories, statementDirections, statementFormats } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
import { Transaction } from '../payments/entities.ts';
import { WalletAccount } from '../wallet-accounts/entities.ts';

/**
 * A wallet statement an operator uploaded for one of the brand's wallet accounts
 * and one day (Asia/Dhaka), and so the report reconciling it
 * (docs/reconciliation.md). The file itself is not kept: its rows are
 * (`statement_lines`), with a hash of the bytes to tell uploads apart.
 */
export const StatementUpload = defineEntity({
  name: 'StatementUpload',
  tableName: 'statement_uploads',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('statement_uploads_brand_id_fkey'),
    walletAccount: () => p.manyToOne(WalletAccount).deleteRule('cascade').foreignKeyName('statement_uploads_wallet_account_id_fkey'),
    mode: p.enum(modes).default('live'),
    /** The day (Asia/Dhaka) reconciled. */
    day: p.date(),
    format: p.enum(statementFormats).columnType('varchar(16)'),
    fileName: p.string().length(200).nullable(),
    /** SHA-256 of the uploaded text (hex). */
    fileSha256: p.string().length(64),
    /** Rows read from the file, every day and direction. */
    rowCount: p.integer(),
    /** The audit actor who uploaded it. */
    uploadedBy: p.string().length(120),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { name: 'statement_uploads_account_day_idx', properties: ['walletAccount', 'day', 'createdAt'] },
    { name: 'statement_uploads_brand_created_idx', properties: ['brand', 'createdAt'] },
  ],
});

/**
 * One row of an uploaded statement. The counterparty (a customer's number or
 * name) is a PII cipher token bound to the brand and `statement:<upload>:<line>`.
 */
export const StatementLine = defineEntity({
  name: 'StatementLine',
  tableName: 'statement_lines',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    upload: () => p.manyToOne(StatementUpload).deleteRule('cascade').foreignKeyName('statement_lines_upload_id_fkey'),
    line: p.integer(),
    occurredAt: p.datetime(),
    /** Upper case, as SMS trx ids are compared. */
    trxId: p.string().length(32),
    direction: p.enum(statementDirections).columnType('varchar(3)'),
    counterpartyEncrypted: p.text().nullable(),
    amount: p.decimal('string').precision(14).scale(2),
    fee: p.decimal('string').precision(14).scale(2).nullable(),
    balance: p.decimal('string').precision(16).scale(2).nullable(),
    type: p.string().length(100).nullable(),
    status: p.string().length(40).nullable(),
  },
  uniques: [{ name: 'statement_lines_upload_trx_key', properties: ['upload', 'trxId'] }],
});

/**
 * One finding of a reconciliation: a statement line, an SMS record, or both,
 * lined up by trx id, and its category. `hintTransactionIds` are open
 * payments of the account with the line's amount near its time: a hint for a
 * person, never used to complete anything.
 */
export const ReconciliationItem = defineEntity({
  name: 'ReconciliationItem',
  tableName: 'reconciliation_items',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    upload: () => p.manyToOne(StatementUpload).deleteRule('cascade').foreignKeyName('reconciliation_items_upload_id_fkey'),
    category: p.enum(reconciliationCategories).columnType('varchar(20)'),
    trxId: p.string().length(64),
    statementLine: () => p.manyToOne(StatementLine).nullable().deleteRule('cascade').foreignKeyName('reconciliation_items_statement_line_id_fkey'),
    /**
     * The SMS record (`sms_records.id`). A plain column, no foreign key: an entity outside the SMS
     * module does not reach into its parts, and a report is a record of what was seen that day.
     */
    smsRecordId: p.bigint('number').nullable(),
    transaction: () => p.manyToOne(Transaction).nullable().deleteRule('set null').foreignKeyName('reconciliation_items_transaction_id_fkey'),
    hintTransactionIds: p.array<number>((i) => Number(i), (n) => String(n)).columnType('bigint[]').nullable(),
  },
  indexes: [{ name: 'reconciliation_items_upload_idx', properties: ['upload', 'category'] }],
});
