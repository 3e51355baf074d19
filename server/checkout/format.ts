/** Pure display helpers for the checkout pages (money stays a string throughout). */

/** "1250000.00" -> "1,250,000.00"; anything not a plain amount is returned as is. */
export function formatAmount(amount: string): string {
  const m = /^(\d+)(\.\d+)?$/.exec(amount);
  if (!m) return amount;
  return m[1]!.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (m[2] ?? '');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "14:05 UTC, 21 Nov 2026": the server does not know the customer's zone; the page script shows local time. */
export function formatUtc(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** First letter of the brand name for its badge (a letter or digit; else a dot). */
export function initialOf(name: string): string {
  const m = /[\p{L}\p{N}]/u.exec(name);
  return m ? m[0].toUpperCase() : '•';
}
