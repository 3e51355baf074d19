/**
 * The console's one way to show a moment: date, time and the zone it is in
 * ("28 Nov 2026, 14:05 GMT+6"), in the browser's own time zone. Operators work
 * across brands whose days are counted in other zones (the overview says which),
 * so a bare "14:05" would be ambiguous.
 */
const WITH_DATE = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'short',
});
const TIME_ONLY = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });

/** "2026-11-28T08:05:00Z" as "28 Nov 2026, 14:05 GMT+6" (the browser's zone); "–" for none or an unreadable value. */
export function formatDateTime(iso: string | number | Date | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '–';
  return WITH_DATE.format(d);
}

/** The time of day with its zone ("14:05:09 GMT+6"), for "updated at" lines. */
export function formatClock(iso: string | number | Date): string {
  return TIME_ONLY.format(new Date(iso));
}

/** The full ISO moment in UTC, for a `title`/`dateTime` beside a shown time. */
export function isoUtc(iso: string | number | Date): string {
  return new Date(iso).toISOString();
}
