/**
 * Reads the rows of an OwnPay database export: the `database.sql` that OwnPay's
 * own backup writes (own-pay/OwnPay src/Update/BackupService.php: `mysqldump
 * --single-transaction`, or, without mysqldump, its PDO fallback writing
 * `SHOW CREATE TABLE` plus one `INSERT INTO \`t\` VALUES (...)` per row), or any
 * plain mysqldump of that database. Only what the import needs is read:
 * `CREATE TABLE` column lists (for INSERTs without one) and `INSERT` rows.
 * Values come back as strings or null (numbers as their text, `0x…` as text of
 * their bytes).
 */

export type DumpRow = Record<string, string | null>;

class DumpError extends Error {}
export { DumpError };

/** Rows per table, for the tables asked for. */
export function readDump(sql: string, tables: readonly string[]): Map<string, DumpRow[]> {
  const wanted = new Set(tables);
  const columns = new Map<string, string[]>();
  const out = new Map<string, DumpRow[]>(tables.map((t) => [t, []]));
  let i = 0;
  const n = sql.length;
  while (i < n) {
    // Skip whitespace and comments between statements.
    const c = sql[i]!;
    if (/\s/.test(c) || c === ';') {
      i++;
      continue;
    }
    if (sql.startsWith('--', i) || c === '#') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      continue;
    }
    const end = statementEnd(sql, i);
    const stmt = sql.slice(i, end);
    i = end + 1;
    const create = /^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`?(\w+)`?\s*\(/i.exec(stmt);
    if (create) {
      const cols: string[] = [];
      for (const line of stmt.slice(create[0].length).split('\n')) {
        const m = /^\s*`(\w+)`\s/.exec(line);
        if (m) cols.push(m[1]!);
      }
      columns.set(create[1]!, cols);
      continue;
    }
    const insert = /^INSERT\s+(?:IGNORE\s+)?INTO\s+`?(\w+)`?\s*(\(([^)]*)\))?\s*VALUES\s*/i.exec(stmt);
    if (!insert) continue;
    const table = insert[1]!;
    if (!wanted.has(table)) continue;
    const cols = insert[3] ? insert[3].split(',').map((s) => s.trim().replace(/`/g, '')) : columns.get(table);
    if (!cols) throw new DumpError(`INSERT into ${table} before its CREATE TABLE and without a column list`);
    for (const values of tuples(stmt, insert[0].length)) {
      if (values.length !== cols.length) throw new DumpError(`a row of ${table} has ${values.length} values for ${cols.length} columns`);
      out.get(table)!.push(Object.fromEntries(cols.map((col, k) => [col, values[k]!])));
    }
  }
  return out;
}

/** Index of the `;` ending the statement starting at `from` (quotes respected). */
function statementEnd(sql: string, from: number): number {
  let quote: string | null = null;
  for (let i = from; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) {
        if (sql[i + 1] === quote) i++;
        else quote = null;
      }
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === ';') return i;
  }
  return sql.length;
}

const ESCAPES: Record<string, string> = { '0': '\0', n: '\n', r: '\r', t: '\t', b: '\b', Z: '\x1a', '\\': '\\', "'": "'", '"': '"' };

/** The value tuples of `VALUES (...),(...)` starting at `from`. */
function tuples(stmt: string, from: number): Array<Array<string | null>> {
  const rows: Array<Array<string | null>> = [];
  let i = from;
  const skip = () => {
    while (i < stmt.length && /[\s,]/.test(stmt[i]!)) i++;
  };
  skip();
  while (i < stmt.length && stmt[i] === '(') {
    i++;
    const row: Array<string | null> = [];
    for (;;) {
      while (/\s/.test(stmt[i] ?? '')) i++;
      const c = stmt[i];
      if (c === undefined) throw new DumpError('unterminated row');
      if (c === "'" || c === '"') {
        let s = '';
        i++;
        for (;;) {
          const d = stmt[i];
          if (d === undefined) throw new DumpError('unterminated string');
          if (d === '\\') {
            const e = stmt[i + 1] ?? '';
            s += ESCAPES[e] ?? e;
            i += 2;
          } else if (d === c) {
            if (stmt[i + 1] === c) {
              s += c;
              i += 2;
            } else {
              i++;
              break;
            }
          } else {
            s += d;
            i++;
          }
        }
        row.push(s);
      } else {
        const m = /^[^,)\s]+/.exec(stmt.slice(i, i + 4096));
        if (!m) throw new DumpError('malformed value');
        const raw = m[0];
        i += raw.length;
        if (/^NULL$/i.test(raw)) row.push(null);
        else if (/^0x[0-9a-f]*$/i.test(raw)) row.push(Buffer.from(raw.slice(2), 'hex').toString('utf8'));
        else row.push(raw);
      }
      while (/\s/.test(stmt[i] ?? '')) i++;
      if (stmt[i] === ',') {
        i++;
        continue;
      }
      if (stmt[i] === ')') {
        i++;
        break;
      }
      throw new DumpError('malformed row');
    }
    rows.push(row);
    skip();
  }
  return rows;
}
