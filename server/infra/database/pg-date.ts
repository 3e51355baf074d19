/**
 * Raw SQL results (`em.execute`) keep timestamptz values as PostgreSQL's text
 * (`2026-11-21 11:44:36.644123+00`, MikroORM's type override); this reads them.
 * Microseconds are cut to milliseconds, which is what the API shows.
 */
export function pgDate(value: string | Date): Date {
  if (value instanceof Date) return value;
  const d = new Date(value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
  if (Number.isNaN(d.getTime())) throw new Error(`unreadable timestamp from the database: ${JSON.stringify(value.slice(0, 40))}`);
  return d;
}

export function pgDateOrNull(value: string | Date | null): Date | null {
  return value === null ? null : pgDate(value);
}
