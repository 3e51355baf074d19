/** Pure display helpers for what customers read: the checkout pages and receipt e-mails (money stays a string throughout). */

/** "1250000.00" -> "1,250,000.00"; anything not a plain amount is returned as is. */
export function formatAmount(amount: string): string {
  const m = /^(\d+)(\.\d+)?$/.exec(amount);
  if (!m) return amount;
  return m[1]!.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (m[2] ?? '');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * A moment (a deadline, a payment's time) in the brand's time zone (UTC when it has none or an unknown
 * one), with the zone spelled out so nobody guesses whose clock it is:
 * "21 Nov 2026, 15:32 (UTC+06:00 Asia/Dhaka)", "21 Nov 2026, 09:32 (UTC)".
 */
export function formatMoment(iso: string, timeZone: string | null): string {
  const d = new Date(iso);
  let zone = timeZone && timeZone !== 'UTC' && timeZone !== 'Etc/UTC' ? timeZone : 'UTC';
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = partsIn(d, zone);
  } catch {
    zone = 'UTC';
    parts = partsIn(d, zone);
  }
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((x) => x.type === type)?.value ?? '';
  const hour = get('hour') === '24' ? '00' : get('hour');
  const offset = get('timeZoneName').replace(/^GMT/, 'UTC');
  const label = zone === 'UTC' ? 'UTC' : `${offset === 'UTC' ? 'UTC+00:00' : offset} ${zone}`;
  return `${Number(get('day'))} ${MONTHS[Number(get('month')) - 1]} ${get('year')}, ${hour}:${get('minute')} (${label})`;
}

function partsIn(d: Date, timeZone: string): Intl.DateTimeFormatPart[] {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(d);
}
