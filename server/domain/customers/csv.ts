import { CsvError, parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { AppError } from '../../../contract/common/errors.ts';

/** One import takes at most this many data rows (README.md, Customers). */
export const IMPORT_MAX_ROWS = 1000;
/** ... and at most this many bytes of CSV: under the API's JSON body limit once quoted into a request. */
export const IMPORT_MAX_BYTES = 90 * 1024;

/** The columns an import reads and an export writes (header names, case-insensitive on import). */
export const IMPORT_COLUMNS = ['name', 'email', 'phone'] as const;

export interface CsvCustomerRow {
  /** 1-based line of the file the row ends on (the header is line 1). */
  line: number;
  name: string | null;
  email: string | null;
  phone: string | null;
}

/** Columns an export adds, which an import of an exported file passes over. */
const EXPORT_ONLY_COLUMNS = ['id', 'uuid', 'created_at'] as const;

/**
 * Characters a spreadsheet reads as the start of a formula (OWASP, "CSV Injection":
 * https://owasp.org/www-community/attacks/CSV_Injection). A cell starting with one is
 * written with a leading `'`, which spreadsheets show as text; an import strips it again,
 * so an exported file imports unchanged.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function escapeFormula(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

function unescapeFormula(cell: string): string {
  return cell.startsWith("'") && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;
}

const tooLarge = () =>
  new AppError('CUSTOMER_IMPORT_TOO_LARGE', `One import takes at most ${IMPORT_MAX_ROWS} rows and ${IMPORT_MAX_BYTES} bytes`, { field: 'csv' });

/**
 * Reads a customer CSV (RFC 4180, through csv-parse): a header row naming some of
 * `name`, `email`, `phone` (in any order, any case; an export's `id`, `uuid` and
 * `created_at` are passed over), then one customer per row. A
 * malformed file (unclosed quote, a row with more cells than the header, an unknown
 * or missing column) is a VALIDATION_ERROR for the whole file: nothing of it is read.
 */
export function parseCustomerCsv(text: string): CsvCustomerRow[] {
  if (Buffer.byteLength(text, 'utf8') > IMPORT_MAX_BYTES) throw tooLarge();
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count_less: true, info: true }) as unknown as typeof records;
  } catch (err) {
    if (err instanceof CsvError) throw new AppError('VALIDATION_ERROR', `Not a readable CSV file: ${err.message}`, { field: 'csv' });
    throw err;
  }
  const [header, ...rows] = records;
  if (!header) throw new AppError('VALIDATION_ERROR', 'The file is empty: give a header row (name,email,phone) and one row per customer', { field: 'csv' });
  const names = header.record.map((h) => h.trim().toLowerCase());
  const unknown = names.filter((n) => !(IMPORT_COLUMNS as readonly string[]).includes(n) && !(EXPORT_ONLY_COLUMNS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new AppError('VALIDATION_ERROR', `Unknown column(s) ${unknown.join(', ')}: the header names some of name, email, phone`, { field: 'csv' });
  if (new Set(names).size !== names.length) throw new AppError('VALIDATION_ERROR', 'A column is named twice in the header', { field: 'csv' });
  if (!names.includes('email') && !names.includes('phone')) throw new AppError('VALIDATION_ERROR', 'The header names neither email nor phone', { field: 'csv' });
  if (rows.length > IMPORT_MAX_ROWS) throw tooLarge();
  const at = (r: string[], col: string) => {
    const i = names.indexOf(col);
    const v = i < 0 ? '' : unescapeFormula((r[i] ?? '').trim());
    return v === '' ? null : v;
  };
  return rows.map(({ record, info }) => ({ line: info.lines, name: at(record, 'name'), email: at(record, 'email'), phone: at(record, 'phone') }));
}

/** Customers as CSV (through csv-stringify), every cell guarded against formula injection. */
export function customersToCsv(rows: Array<{ id: number; uuid: string; name: string | null; email: string | null; phone: string | null; createdAt: Date }>): string {
  return stringify(
    rows.map((r) => [String(r.id), r.uuid, r.name ?? '', r.email ?? '', r.phone ?? '', r.createdAt.toISOString()].map(escapeFormula)),
    { header: true, columns: ['id', 'uuid', ...IMPORT_COLUMNS, 'created_at'] },
  );
}
