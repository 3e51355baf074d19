import { createHash } from 'node:crypto';
import { stringify } from 'csv-stringify/sync';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode, ReconciliationCategory, StatementFormat } from '../../../contract/vocabulary.ts';
import type { PiiBinding, PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import type { Db } from '../db.ts';
import { accountById } from '../wallet-accounts/queries.ts';
import { insertLines, insertUpload, itemsOf, listUploads, reconcileUpload, uploadById, type ItemRow, type UploadRow } from './queries.ts';
import { parseStatement } from './statement-parser.ts';

/**
 * Statement reconciliation (docs/reconciliation.md): an operator uploads a
 * wallet account's statement for a day; the service lines its incoming rows up
 * against the SMS and payments it knows, by trx id. It reports only: nothing
 * here completes, fails or changes a payment or an SMS record.
 */

export const COUNTERPARTY_CONTEXT = 'statement_line.counterparty';

/** A statement row's values are bound to the brand and to its upload and line. */
export function statementLineBinding(brandId: number, uploadId: number, line: number): PiiBinding {
  return { brandId, row: `statement:${uploadId}:${line}` };
}

/** Bangladesh has kept UTC+06:00 all year since 2009: the wallets' day is Dhaka's. */
const DHAKA_OFFSET_MS = 6 * 3_600_000;

/** The instants a Dhaka day `YYYY-MM-DD` runs between. */
export function dhakaDay(day: string): { start: Date; end: Date } {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const start = new Date(Date.UTC(y, m - 1, d) - DHAKA_OFFSET_MS);
  return { start, end: new Date(start.getTime() + 86_400_000) };
}

export function dhakaToday(now = new Date()): string {
  return new Date(now.getTime() + DHAKA_OFFSET_MS).toISOString().slice(0, 10);
}

const MAX_LISTED_BAD_ROWS = 50;

export interface StatementUploadInput {
  accountId: number;
  day: string;
  mode: Mode;
  fileName: string | null;
  content: string;
}

export interface ReconciliationItemView {
  id: number;
  category: ReconciliationCategory;
  trxId: string;
  line: number | null;
  occurredAt: Date | null;
  statementAmount: string | null;
  statementFee: string | null;
  statementBalance: string | null;
  statementType: string | null;
  statementStatus: string | null;
  counterparty: string | null;
  smsRecordId: number | null;
  smsAmount: string | null;
  smsFee: string | null;
  smsTime: Date | null;
  smsStatus: string | null;
  transactionId: number | null;
  transactionStatus: string | null;
  hintTransactionIds: number[];
}

export interface ReconciliationView {
  upload: UploadRow;
  items: ReconciliationItemView[];
}

function itemView(cipher: PiiCipher, upload: UploadRow, r: ItemRow): ReconciliationItemView {
  return {
    id: r.id,
    category: r.category,
    trxId: r.trx_id,
    line: r.line,
    occurredAt: r.occurred_at,
    statementAmount: r.statement_amount,
    statementFee: r.statement_fee,
    statementBalance: r.statement_balance,
    statementType: r.statement_type,
    statementStatus: r.statement_status,
    counterparty: r.counterparty_encrypted && r.line !== null ? cipher.decrypt(r.counterparty_encrypted, COUNTERPARTY_CONTEXT, statementLineBinding(upload.brand_id, upload.id, r.line)) : null,
    smsRecordId: r.sms_record_id,
    smsAmount: r.sms_amount,
    smsFee: r.sms_fee,
    smsTime: r.sms_time,
    smsStatus: r.sms_status,
    transactionId: r.transaction_id,
    transactionStatus: r.transaction_status,
    hintTransactionIds: r.hint_transaction_ids ?? [],
  };
}

function refuseParse(p: Exclude<ReturnType<typeof parseStatement>, { ok: true }>): never {
  if (p.problem === 'unknown_columns') {
    const found = p.headings.length ? ` Columns found: ${p.headings.slice(0, 20).join(', ')}.` : '';
    throw new AppError('STATEMENT_UNKNOWN_COLUMNS', `${p.message}.${found}`, { field: 'content' });
  }
  throw new AppError('STATEMENT_UNREADABLE', p.message, { field: 'content' });
}

/**
 * Reads the statement, stores it and its report in one database transaction,
 * audited. A file with any bad row is refused whole (`STATEMENT_ROWS_INVALID`,
 * one item per row): a skipped row could be the very payment being looked for.
 */
export async function uploadStatement(db: Db, cipher: PiiCipher, who: AuditActor, input: StatementUploadInput): Promise<ReconciliationView> {
  const account = await accountById(db, input.accountId);
  if (!account) throw new AppError('WALLET_ACCOUNT_NOT_FOUND');
  if (input.day > dhakaToday()) throw new AppError('STATEMENT_DAY_IN_FUTURE', `${input.day} has not begun in Asia/Dhaka yet`, { field: 'day' });
  const parsed = parseStatement(input.content, account.number);
  if (!parsed.ok) refuseParse(parsed);
  if (parsed.badRows.length > 0) {
    const details = parsed.badRows.slice(0, MAX_LISTED_BAD_ROWS).map((b) => ({
      code: 'STATEMENT_ROWS_INVALID' as const,
      message: `line ${b.line}${b.column ? `, column ${b.column}` : ''}: ${b.reason}`,
      field: `content.line.${b.line}`,
    }));
    const more = parsed.badRows.length > MAX_LISTED_BAD_ROWS ? ` (the first ${MAX_LISTED_BAD_ROWS} are listed)` : '';
    throw new AppError('STATEMENT_ROWS_INVALID', `${parsed.badRows.length} row(s) of the statement cannot be read${more}; nothing was stored`, { field: 'content', details });
  }
  const { start, end } = dhakaDay(input.day);
  const uploadId = await withAudit(db, who, async (tx) => {
    const id = await insertUpload(tx, {
      brand_id: account.brand_id,
      wallet_account_id: account.id,
      mode: input.mode,
      day: input.day,
      format: parsed.format,
      file_name: input.fileName,
      file_sha256: createHash('sha256').update(input.content, 'utf8').digest('hex'),
      row_count: parsed.rows.length,
      uploaded_by: who.actor,
    });
    await insertLines(tx, parsed.rows.map((r) => ({
      upload_id: id,
      line: r.line,
      occurred_at: r.occurredAt,
      trx_id: r.trxId,
      direction: r.direction,
      counterparty_encrypted: r.counterparty === null ? null : cipher.encrypt(r.counterparty, COUNTERPARTY_CONTEXT, statementLineBinding(account.brand_id, id, r.line)),
      amount: r.amount,
      fee: r.fee,
      balance: r.balance,
      type: r.type?.slice(0, 100) ?? null,
      status: r.status?.slice(0, 40) ?? null,
    })));
    await reconcileUpload(tx, { uploadId: id, accountId: account.id, mode: input.mode, dayStart: start, dayEnd: end });
    const counts = (await uploadById(tx, id))!.counts;
    return {
      result: id,
      audit: {
        action: 'statement.reconcile',
        targetType: 'statement_upload',
        targetId: id,
        brandId: account.brand_id,
        after: { wallet_account_id: account.id, day: input.day, mode: input.mode, format: parsed.format, rows: parsed.rows.length, ...counts },
      },
    };
  });
  return getReconciliation(db, cipher, uploadId);
}

export async function getReconciliation(db: Db, cipher: PiiCipher, uploadId: number, scope: number[] | null = null): Promise<ReconciliationView> {
  const upload = await uploadById(db, uploadId);
  if (!upload || (scope !== null && !scope.includes(upload.brand_id))) throw new AppError('RECONCILIATION_NOT_FOUND');
  const items = (await itemsOf(db, uploadId)).map((r) => itemView(cipher, upload, r));
  return { upload, items };
}

export async function listReconciliations(
  db: Db,
  q: { scope: number[] | null; brandId?: number; accountId?: number; day?: string; mode?: Mode; page: number; perPage: number },
): Promise<{ rows: UploadRow[]; total: number }> {
  return listUploads(db, { ...q, limit: q.perPage, offset: (q.page - 1) * q.perPage });
}

/** A spreadsheet opens a cell starting with one of these as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
const cellText = (v: string | number | null): string => {
  if (v === null) return '';
  const s = String(v);
  return FORMULA_START.test(s) ? `'${s}` : s;
};

export const REPORT_CSV_COLUMNS = [
  'category', 'trx_id', 'line', 'occurred_at', 'statement_amount', 'statement_fee', 'statement_balance', 'statement_type', 'statement_status', 'counterparty',
  'sms_record_id', 'sms_amount', 'sms_fee', 'sms_time', 'transaction_id', 'transaction_status', 'hint_transaction_ids',
] as const;

/** The report as CSV (RFC 4180 by csv-stringify), every cell a spreadsheet would run as a formula prefixed with `'`. */
export function reportCsv(view: ReconciliationView): string {
  const rows = view.items.map((i) => [
    i.category, i.trxId, i.line, i.occurredAt?.toISOString() ?? null, i.statementAmount, i.statementFee, i.statementBalance, i.statementType, i.statementStatus,
    i.counterparty, i.smsRecordId, i.smsAmount, i.smsFee, i.smsTime?.toISOString() ?? null, i.transactionId, i.transactionStatus, i.hintTransactionIds.join(' '),
  ].map(cellText));
  return stringify([[...REPORT_CSV_COLUMNS], ...rows], { record_delimiter: '\r\n' });
}

export function reportFileName(u: { gateway_code: string; account_number: string; day: string; id: number; format: StatementFormat }): string {
  return `reconciliation-${u.gateway_code}-${u.account_number.replace(/[^0-9A-Za-z]/g, '')}-${u.day}-${u.id}.csv`;
}
