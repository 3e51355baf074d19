/** Human output: aligned key/value blocks and tables; `--json` bypasses all of this. */

type Row = Record<string, unknown>;

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length ? value.map(cell).join(',') : '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/\s+/g, ' ');
}

/** `key: value` lines, keys padded to one width. */
export function block(o: Row, keys: string[] = Object.keys(o)): string {
  const width = Math.max(...keys.map((k) => k.length));
  return keys.map((k) => `${`${k}:`.padEnd(width + 1)} ${cell(o[k])}`).join('\n');
}

/** A table of the given columns; long cells are cut so a row stays on one line. */
export function table(rows: Row[], columns: string[], meta?: { page?: number; total?: number; total_pages?: number }): string {
  const cut = (s: string) => (s.length > 48 ? `${s.slice(0, 47)}…` : s);
  const cells = rows.map((r) => columns.map((c) => cut(cell(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  const out = [line(columns), ...cells.map(line)];
  if (rows.length === 0) out.push('(none)');
  if (meta?.total !== undefined) out.push(`page ${meta.page ?? 1} of ${Math.max(meta.total_pages ?? 1, 1)}, ${meta.total} in all`);
  return out.join('\n');
}
