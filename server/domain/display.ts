/** Pure display helpers for what customers read: the checkout pages, invoices and receipt e-mails (money stays a string throughout). */

/** The languages customers read (the checkout pages' `Lang`, the invoice's `InvoiceLanguage`). */
export type DisplayLanguage = 'en' | 'bn';

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

// ---------------------------------------------------------------------------
// Numbers, money and days as Bangladeshi customers read them

const BANGLA_DIGITS = '০১২৩৪৫৬৭৮৯';
/** Bangla digits, as a customer types them on a Bangla page or a wallet statement writes them, as Latin ones; everything else as is. */
export function latinDigits(text: string): string {
  return text.replace(/[০-৯]/g, (d) => String(BANGLA_DIGITS.indexOf(d)));
}

const bnNumber = new Map<number, Intl.NumberFormat>();
/**
 * A decimal string in Bangla digits with the Indian-system grouping Bangladesh
 * uses (Intl `bn-BD` groups 1,00,000 and 1,00,00,000, checked in the unit test).
 * Intl formats the string exactly: the amount never becomes a float.
 */
export function formatNumberBn(amount: string): string {
  const m = /^-?\d+(?:\.(\d+))?$/.exec(amount);
  if (!m) return amount;
  const digits = m[1]?.length ?? 0;
  let f = bnNumber.get(digits);
  if (!f) bnNumber.set(digits, (f = new Intl.NumberFormat('bn-BD', { minimumFractionDigits: digits, maximumFractionDigits: digits })));
  return f.format(amount as unknown as number);
}

/** The amount alone, in the language's digits and grouping. */
export function formatAmountIn(lang: DisplayLanguage, amount: string): string {
  return lang === 'bn' ? formatNumberBn(amount) : formatAmount(amount);
}

/** How the currency is written after an amount: `৳` for taka in Bangla, the ISO code otherwise. */
export function currencyLabel(lang: DisplayLanguage, currency: string): string {
  return lang === 'bn' && currency === 'BDT' ? '৳' : currency;
}

/** "1,250.00 BDT" / "১,২৫০.০০ ৳" (a no-break space between, so it never wraps apart). */
export function formatMoney(lang: DisplayLanguage, amount: string, currency: string): string {
  return `${formatAmountIn(lang, amount)}\u00a0${currencyLabel(lang, currency)}`;
}

/** A quantity (an exact decimal string): as given in English, in Bangla digits in Bangla. */
export function formatQuantityIn(lang: DisplayLanguage, quantity: string): string {
  return lang === 'bn' ? formatNumberBn(quantity) : quantity;
}

const bnDay = new Intl.DateTimeFormat('bn-BD', { timeZone: 'UTC', day: 'numeric', month: 'long', year: 'numeric' });
/**
 * A calendar day (`YYYY-MM-DD`, a due date: no time, no zone): as the API
 * writes it in English, "১২ ডিসেম্বর ২০২৬" in Bangla. Read as that day at UTC
 * midnight and written in UTC, so no zone can move it to the day before.
 */
export function formatDayIn(lang: DisplayLanguage, day: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (lang === 'en' || !m) return day;
  // From the parts, as the checkout writes its moments ("২৮ নভেম্বর ২০২৬"), without the comma Intl puts before the year.
  const parts = bnDay.formatToParts(new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))));
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((x) => x.type === type)?.value ?? '';
  return `${get('day')} ${get('month')} ${get('year')}`;
}
