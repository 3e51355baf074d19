/**
 * The time a wallet SMS states in its own text (the template's `time` group),
 * as the wallet wrote it: Bangladesh time (UTC+6, no daylight saving), to the
 * minute or the second. The wallets' formats:
 * - `30/10/2025 21:02` (bKash, `at ...`; Nagad), optionally with seconds and am/pm;
 * - `15-MAR-24 02:32:10 pm` (Rocket, `Date:...`).
 * Anything else is null: the SMS's stated time is then simply not known.
 */

const BANGLADESH_OFFSET_MINUTES = 6 * 60;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const DMY = /^(\d{2})\/(\d{2})\/(\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap])\.?m\.?)?$/i;
const D_MON_Y = /^(\d{2})-([a-z]{3})-(\d{2}|\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap])\.?m\.?)?$/i;

export interface StatedTime {
  /** The stated moment. */
  at: Date;
  /** How precise it is: a time written to the minute stands for any moment of that minute. */
  precisionMs: number;
}

export function parseStatedTime(raw: string | null | undefined): StatedTime | null {
  if (typeof raw !== 'string') return null;
  const s = raw.trim();
  let day: number, month: number, year: number, hour: number, minute: number, second: string | undefined, half: string | undefined;
  let m = DMY.exec(s);
  if (m) {
    [day, month, year, hour, minute] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])];
    [second, half] = [m[6], m[7]];
  } else if ((m = D_MON_Y.exec(s))) {
    const mon = MONTHS.indexOf(m[2]!.toLowerCase());
    if (mon < 0) return null;
    [day, month, hour, minute] = [Number(m[1]), mon + 1, Number(m[4]), Number(m[5])];
    year = m[3]!.length === 2 ? 2000 + Number(m[3]) : Number(m[3]);
    [second, half] = [m[6], m[7]];
  } else return null;
  if (half !== undefined) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (half.toLowerCase() === 'p' ? 12 : 0);
  }
  const sec = second === undefined ? 0 : Number(second);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59) return null;
  const utc = Date.UTC(year, month - 1, day, hour, minute, sec) - BANGLADESH_OFFSET_MINUTES * 60_000;
  const check = new Date(utc + BANGLADESH_OFFSET_MINUTES * 60_000);
  // 31/02 and the like roll over in Date.UTC: not a real date.
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null;
  return { at: new Date(utc), precisionMs: second === undefined ? 60_000 : 1_000 };
}
