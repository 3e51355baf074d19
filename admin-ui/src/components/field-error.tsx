import { ApiError } from '../api.ts';

/**
 * A refusal the server pinned on one field (`errors[0].field` of the error
 * envelope), shown under that field rather than at the top of the form, so
 * the operator and a screen reader land on what to fix.
 */
export function errorOn(error: unknown, field: string): ApiError | null {
  if (!(error instanceof ApiError) || error.field === null) return null;
  return error.field === field || error.field.startsWith(`${field}.`) ? error : null;
}

/** True when the error names none of `fields` (so the form shows it as a whole). */
export function unplaced(error: unknown, fields: readonly string[]): unknown {
  return fields.some((f) => errorOn(error, f)) ? null : error;
}

/** Props for the field's control: invalid state and the error as its description. */
export function invalidProps(error: unknown, field: string, id: string): { 'aria-invalid'?: true; 'aria-describedby'?: string } {
  return errorOn(error, field) ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};
}

export function FieldError({ error, field, id }: { error: unknown; field: string; id: string }) {
  const e = errorOn(error, field);
  if (!e) return null;
  return (
    <p id={`${id}-error`} role="alert" className="text-sm text-red-800">
      {e.message} <span className="text-xs text-red-700">({e.field}, {e.code})</span>
    </p>
  );
}

/** "1200.00" -> "1,200.00": grouping on the decimal string, never through a float. */
export function groupedAmount(amount: string): string {
  const [int = '', frac] = amount.split('.');
  const sign = int.startsWith('-') ? '-' : '';
  const digits = int.replace(/^-/, '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${digits}${frac === undefined ? '' : `.${frac}`}`;
}

/** A moment as the value of an `<input type="datetime-local">` (the browser's local time, to the minute). */
export function localInputValue(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A `datetime-local` value as an ISO timestamp; an empty or unreadable one is sent as given, for the server to name. */
export function isoFromLocalInput(v: string): string {
  const d = new Date(v);
  return v && !Number.isNaN(d.getTime()) ? d.toISOString() : v;
}
