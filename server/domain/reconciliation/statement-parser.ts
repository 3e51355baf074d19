import { parse } from 'csv-parse/sync';
import type { StatementFormat } from '../../../contract/vocabulary.ts';
import { smsNumberToE164 } from '../sms/index.ts';
import { latinDigits } from '../display.ts';

/**
 * Pure reading of a wallet statement export (docs/reconciliation.md, "Formats").
 * Three layouts are recognised by their column headings; anything else is
 * refused, never guessed at.
 *
 * - `bkash`: the columns of bKash's transaction statement as public parsers of
 *   it read them: `SL, Trx Id, Transaction Date, Trx Type, Sender, Receiver,
 *   Receiver Name, Reference, Transacted Amount, Fee, Balance` (the header map and
 *   the default heading list of a public bKash/Nagad/Rocket statement analyser
 *   on GitHub, `parseBkashExcelFile` with `EXPECTED_BKASH_HEADERS_MAP`, written from
 *   an image of a real statement; found by code search, its repository name was not
 *   exposed by the index: docs/reconciliation.md). Not a format bKash publishes:
 *   none of bKash's own was found.
 *   The direction is read from which side, `Sender` or `Receiver`, is the
 *   account's own number; a row naming neither is refused.
 * - `nagad`: the columns of Nagad's account statement: `Sl, TXN_DATE_TIME,
 *   TXN_ID, TXN_TYPE, STATEMENT_FOR_ACC, TXN_WITH_ACC, CHANNEL, REFERENCE,
 *   TXN_TYPE_DR_CR (or TXN_TYPE_D_C), TXN_AMT, AVAILABLE_BLC_AFTER_TXN, STATUS`,
 *   as several public projects load it (a Nagad record type with those fields,
 *   and a PostgreSQL/Neo4j statement loader reading `TXN_TYPE_D_C` as `D…`/`C…`;
 *   found by code search for `AVAILABLE_BLC_AFTER_TXN`). It has no fee column.
 * - `generic`: this service's own documented layout, for any other wallet's
 *   export a merchant re-labels: `date_time, trx_id, direction, counterparty,
 *   amount, fee, balance` (+ optional `type`, `status`).
 *
 * Times are Bangladesh wallet times: read in Asia/Dhaka (UTC+06:00 all year)
 * unless they carry an offset. Amounts are exact decimal strings with two places.
 */

export { statementFormats, type StatementFormat } from '../../../contract/vocabulary.ts';

export interface StatementRow {
  /** 1-based line of the file the row is on. */
  line: number;
  occurredAt: Date;
  trxId: string;
  direction: 'in' | 'out';
  /** The other side's number or name as the statement gives it (personal data). */
  counterparty: string | null;
  amount: string;
  fee: string | null;
  balance: string | null;
  /** The wallet's own words for the row (`Cash In`, `Send Money`, ...). */
  type: string | null;
  status: string | null;
}

export interface BadRow {
  line: number;
  /** The heading of the offending column as the file spells it; null: the row as a whole. */
  column: string | null;
  reason: string;
}

export type StatementParse =
  | { ok: true; format: StatementFormat; rows: StatementRow[]; badRows: BadRow[] }
  | { ok: false; problem: 'unreadable'; message: string }
  | { ok: false; problem: 'unknown_columns'; message: string; headings: string[] }
  | { ok: false; problem: 'empty'; message: string };

type Field = 'dateTime' | 'trxId' | 'type' | 'sender' | 'receiver' | 'counterparty' | 'direction' | 'amount' | 'fee' | 'balance' | 'status' | 'ownAccount';

interface Layout {
  format: StatementFormat;
  /** Accepted headings (normalised, see `heading`) per field. */
  columns: Partial<Record<Field, readonly string[]>>;
  required: readonly Field[];
}

const LAYOUTS: readonly Layout[] = [
  {
    format: 'bkash',
    columns: {
      trxId: ['trx id', 'transaction id'],
      dateTime: ['transaction date', 'date time'],
      type: ['trx type', 'transaction type'],
      sender: ['sender'],
      receiver: ['receiver'],
      amount: ['transacted amount'],
      fee: ['fee'],
      balance: ['balance'],
    },
    required: ['trxId', 'dateTime', 'sender', 'receiver', 'amount'],
  },
  {
    format: 'nagad',
    columns: {
      dateTime: ['txn date time'],
      trxId: ['txn id'],
      type: ['txn type'],
      ownAccount: ['statement for acc'],
      counterparty: ['txn with acc'],
      direction: ['txn type dr cr', 'txn type d c'],
      amount: ['txn amt'],
      balance: ['available blc after txn'],
      status: ['status'],
    },
    required: ['dateTime', 'trxId', 'direction', 'amount'],
  },
  {
    format: 'generic',
    columns: {
      dateTime: ['date time'],
      trxId: ['trx id'],
      type: ['type'],
      direction: ['direction'],
      counterparty: ['counterparty'],
      amount: ['amount'],
      fee: ['fee'],
      balance: ['balance'],
      status: ['status'],
    },
    required: ['dateTime', 'trxId', 'direction', 'amount'],
  },
];

/** Headings compared without case, spacing, `_`, `-`, `.` or `/` differences: `TXN_DATE_TIME` = `txn date time`. */
function heading(raw: string): string {
  return raw.replace(/^\uFEFF/, '').trim().toLowerCase().replace(/[\s_./-]+/g, ' ').trim();
}


/** `1,250.5`, `Tk 1,250.50`, `৳১২৫০` -> `1250.50`; null when it is not a plain non-negative amount with at most two places. */
export function statementAmount(raw: string): string | null {
  const s = latinDigits(raw).trim().replace(/^(?:tk\.?|bdt|৳)\s*/i, '');
  if (!/^(?:\d{1,3}(?:,\d{2,3})*|\d+)(?:\.\d{1,2})?$/.test(s)) return null;
  const [whole, frac = ''] = s.replace(/,/g, '').split('.');
  const digits = whole!.replace(/^0+(?=\d)/, '');
  if (digits.length > 12) return null;
  return `${digits}.${frac.padEnd(2, '0')}`;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DHAKA_OFFSET_MINUTES = 6 * 60;

function clock(h: number, mi: number, s: number, ampm: string | undefined): [number, number, number] | null {
  if (ampm) {
    if (h < 1 || h > 12) return null;
    const pm = ampm.toLowerCase() === 'pm';
    h = (h % 12) + (pm ? 12 : 0);
  }
  if (h > 23 || mi > 59 || s > 59) return null;
  return [h, mi, s];
}

function instant(y: number, mo: number, d: number, time: [number, number, number], offsetMinutes: number): Date | null {
  const utc = Date.UTC(y, mo - 1, d, time[0], time[1], time[2]);
  const check = new Date(utc);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  return new Date(utc - offsetMinutes * 60_000);
}

const TIME = String.raw`(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?`;
const ISO_RE = new RegExp(String.raw`^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?$`);
const DMY_RE = new RegExp(String.raw`^(\d{1,2})[/-](\d{1,2})[/-](\d{4})[ T]+${TIME}$`);
const DMONY_RE = new RegExp(String.raw`^(\d{1,2})[ -]([A-Za-z]{3})[a-z]*[ -](\d{2}|\d{4})[ T,]+${TIME}$`);

/**
 * The instant a statement time stands for, or null. Accepted: ISO
 * (`2026-05-26 10:58[:30]`, optional offset), day first with numbers
 * (`26/05/2026 10:58`, `26-05-2026 10:58:30`, as bKash's SMS write dates), and
 * day first with a month name (`26-May-26 10:58:30 AM`, `26 May 2026 22:45`).
 * Month-first dates are not accepted: `05/06/2026` would be read wrong half the time.
 */
export function statementTime(raw: string): Date | null {
  const s = latinDigits(raw).trim().replace(/\s+/g, ' ');
  let m = ISO_RE.exec(s);
  if (m) {
    const time = clock(Number(m[4]), Number(m[5]), Number(m[6] ?? 0), undefined);
    if (!time) return null;
    let offset = DHAKA_OFFSET_MINUTES;
    if (m[7] === 'Z') offset = 0;
    else if (m[7]) {
      const o = m[7].replace(':', '');
      offset = (o[0] === '-' ? -1 : 1) * (Number(o.slice(1, 3)) * 60 + Number(o.slice(3, 5)));
    }
    return instant(Number(m[1]), Number(m[2]), Number(m[3]), time, offset);
  }
  m = DMY_RE.exec(s);
  if (m) {
    const time = clock(Number(m[4]), Number(m[5]), Number(m[6] ?? 0), m[7]);
    return time ? instant(Number(m[3]), Number(m[2]), Number(m[1]), time, DHAKA_OFFSET_MINUTES) : null;
  }
  m = DMONY_RE.exec(s);
  if (m) {
    const month = MONTHS.indexOf(m[2]!.toLowerCase()) + 1;
    if (month === 0) return null;
    const year = m[3]!.length === 2 ? 2000 + Number(m[3]) : Number(m[3]);
    const time = clock(Number(m[4]), Number(m[5]), Number(m[6] ?? 0), m[7]);
    return time ? instant(year, month, Number(m[1]), time, DHAKA_OFFSET_MINUTES) : null;
  }
  return null;
}

const TRX_ID_RE = /^[A-Za-z0-9]{6,32}$/;

/** The same wallet number however it is written (`+880 1712-345678`, `01712345678`); names and short codes compare as text. */
function sameNumber(a: string, b: string): boolean {
  const ea = smsNumberToE164(a);
  const eb = smsNumberToE164(b);
  if (ea !== null && eb !== null) return ea === eb;
  return a.replace(/[\s-]/g, '') === b.replace(/[\s-]/g, '');
}

/** Magic numbers of what operators upload instead of a text export: PDF, XLSX (a zip), legacy XLS (OLE2), and NUL bytes or undecodable bytes of any binary. */
const BINARY_STARTS = ['%PDF-', 'PK\u0003\u0004', '\u00D0\u00CF\u0011\u00E0', '\uFFFD'];
function looksBinary(text: string): boolean {
  return text.includes('\u0000') || BINARY_STARTS.some((m) => text.startsWith(m));
}

/** How many of a layout's required fields a heading row names. */
function columnsOf(layout: Layout, headings: string[]): Partial<Record<Field, number>> | null {
  const at: Partial<Record<Field, number>> = {};
  for (const [field, names] of Object.entries(layout.columns) as Array<[Field, readonly string[]]>) {
    const i = headings.findIndex((h) => names.includes(h));
    if (i >= 0) at[field] = i;
  }
  return layout.required.every((f) => at[f] !== undefined) ? at : null;
}

const HEADER_SEARCH_ROWS = 20;
const MAX_BAD_ROWS = 200;

/**
 * Reads a statement export (CSV, or the tab-separated text a spreadsheet or the
 * app copies) for the wallet account numbered `accountNumber`. Lines before the
 * heading row (an account name, a period) are skipped; the heading row is the
 * first one of the first 20 that names a known layout's required columns.
 */
export function parseStatement(text: string, accountNumber: string): StatementParse {
  if (looksBinary(text)) {
    return { ok: false, problem: 'unreadable', message: 'This is not a text statement (a PDF, a spreadsheet or another binary file): export the statement as CSV or text' };
  }
  const body = text.replace(/^\uFEFF/, '');
  const firstLine = body.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const delimiter = firstLine.split('\t').length > firstLine.split(',').length ? '\t' : ',';
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(body, { delimiter, info: true, relax_column_count: true, skip_empty_lines: true, trim: true }) as unknown as typeof records;
  } catch (err) {
    return { ok: false, problem: 'unreadable', message: `This is not a readable CSV file: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  }
  if (records.length === 0) return { ok: false, problem: 'empty', message: 'The file is empty' };

  let header: { index: number; layout: Layout; at: Partial<Record<Field, number>>; names: string[] } | null = null;
  for (let i = 0; i < Math.min(HEADER_SEARCH_ROWS, records.length) && !header; i++) {
    const headings = records[i]!.record.map(heading);
    for (const layout of LAYOUTS) {
      const at = columnsOf(layout, headings);
      if (at) {
        header = { index: i, layout, at, names: records[i]!.record };
        break;
      }
    }
  }
  if (!header) {
    const headings = records[0]!.record.map((h) => h.trim()).filter((h) => h !== '');
    return {
      ok: false,
      problem: 'unknown_columns',
      headings,
      message: `No known statement layout: the columns of a bKash statement (Trx Id, Transaction Date, Sender, Receiver, Transacted Amount), a Nagad statement (TXN_DATE_TIME, TXN_ID, TXN_TYPE_DR_CR, TXN_AMT) or the generic layout (date_time, trx_id, direction, amount) were not found`,
    };
  }

  const { layout, at, names } = header;
  const rows: StatementRow[] = [];
  const badRows: BadRow[] = [];
  const seen = new Map<string, number>();
  const colName = (f: Field) => names[at[f]!]!.trim();
  const cell = (r: string[], f: Field): string => (at[f] === undefined ? '' : (r[at[f]!] ?? '').trim());

  for (const { record, info } of records.slice(header.index + 1)) {
    if (badRows.length >= MAX_BAD_ROWS) break;
    const line = info.lines;
    if (record.every((c) => c.trim() === '')) continue;
    const bad = (f: Field | null, reason: string) => badRows.push({ line, column: f ? colName(f) : null, reason });

    const trxRaw = cell(record, 'trxId');
    if (!TRX_ID_RE.test(trxRaw)) {
      bad('trxId', trxRaw === '' ? 'no transaction id' : 'not a transaction id (6 to 32 letters and digits)');
      continue;
    }
    const trxId = trxRaw.toUpperCase();
    const earlier = seen.get(trxId);
    if (earlier !== undefined) {
      bad('trxId', `the same transaction id as line ${earlier}`);
      continue;
    }
    const occurredAt = statementTime(cell(record, 'dateTime'));
    if (!occurredAt) {
      bad('dateTime', `not a date and time this service reads (${JSON.stringify(cell(record, 'dateTime').slice(0, 40))})`);
      continue;
    }
    const amount = statementAmount(cell(record, 'amount'));
    if (amount === null || !/[1-9]/.test(amount)) {
      bad('amount', `not an amount (${JSON.stringify(cell(record, 'amount').slice(0, 30))})`);
      continue;
    }
    let fee: string | null = null;
    if (at.fee !== undefined && cell(record, 'fee') !== '') {
      fee = statementAmount(cell(record, 'fee'));
      if (fee === null) {
        bad('fee', `not an amount (${JSON.stringify(cell(record, 'fee').slice(0, 30))})`);
        continue;
      }
    }
    let balance: string | null = null;
    if (at.balance !== undefined && cell(record, 'balance') !== '') {
      balance = statementAmount(cell(record, 'balance'));
      if (balance === null) {
        bad('balance', `not an amount (${JSON.stringify(cell(record, 'balance').slice(0, 30))})`);
        continue;
      }
    }

    let direction: 'in' | 'out';
    let counterparty: string | null;
    if (layout.format === 'bkash') {
      const sender = cell(record, 'sender');
      const receiver = cell(record, 'receiver');
      const toUs = receiver !== '' && sameNumber(receiver, accountNumber);
      const fromUs = sender !== '' && sameNumber(sender, accountNumber);
      if (toUs === fromUs) {
        bad(null, toUs ? 'the account is both sender and receiver' : "neither the sender nor the receiver is this account's number: a statement of another account?");
        continue;
      }
      direction = toUs ? 'in' : 'out';
      counterparty = (toUs ? sender : receiver) || null;
    } else {
      const own = cell(record, 'ownAccount');
      if (own !== '' && !sameNumber(own, accountNumber)) {
        bad('ownAccount', "the statement is for another account than this one's number");
        continue;
      }
      const d = cell(record, 'direction').toLowerCase();
      const parsed = layout.format === 'nagad' ? (/^c/.test(d) ? 'in' : /^d/.test(d) ? 'out' : null) : d === 'in' ? 'in' : d === 'out' ? 'out' : null;
      if (!parsed) {
        bad('direction', layout.format === 'nagad' ? 'neither credit (C…) nor debit (D…)' : 'must be in or out');
        continue;
      }
      direction = parsed;
      counterparty = cell(record, 'counterparty') || null;
    }
    seen.set(trxId, line);
    rows.push({
      line, occurredAt, trxId, direction, counterparty, amount, fee, balance,
      type: cell(record, 'type') || null,
      status: cell(record, 'status') || null,
    });
  }
  if (rows.length === 0 && badRows.length === 0) return { ok: false, problem: 'empty', message: 'The statement has a heading row but no transaction rows' };
  return { ok: true, format: layout.format, rows, badRows };
}
