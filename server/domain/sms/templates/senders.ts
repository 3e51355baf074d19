import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * How an SMS sender is compared with a wallet's official sender ids.
 *
 * The sender decides whether a message is trusted as a wallet's own, so the
 * comparison is deliberately narrow:
 * - names (`bKash`, `NAGAD`, `tap.`) are printable ASCII compared
 *   case-insensitively and nothing else: no Unicode folding, no trimming, no
 *   removal of spaces. A name with any non-ASCII or control character (fullwidth
 *   `ｂＫａｓｈ`, Cyrillic look-alikes, zero-width or bidi characters, U+FEFF, any
 *   Unicode space) or a leading or trailing space equals nothing, not even itself;
 * - numbers (`+8801847348685`, `01847-348685`) are compared in E.164, national
 *   forms read as Bangladeshi; short codes (`16216`) compare as their digits.
 */

/** Phone numbers and short codes: digits with the usual separators and an optional leading `+`. */
const NUMBER_RE = /^\+?[0-9][0-9 ().-]*$/;
/** Printable ASCII only (space to tilde). */
const ASCII_NAME_RE = /^[\x20-\x7e]+$/;
/** Longer than a short code: read as a phone number. */
const MAX_SHORT_CODE_DIGITS = 6;
const MAX_SENDER_LENGTH = 64;

/** The digits of a number that libphonenumber does not know: `00` and the Bangladeshi national prefix handled by hand. */
function plainNumberKey(raw: string): string {
  let digits = raw.replace(/\D/g, '');
  if (!raw.startsWith('+')) {
    if (digits.startsWith('00')) digits = digits.slice(2);
    else if (/^01\d{9}$/.test(digits)) digits = `88${digits}`;
  }
  return `+${digits}`;
}

/**
 * The comparison key of a sender, or null when it can equal nothing (empty,
 * too long, non-ASCII or control characters).
 */
export function senderKey(sender: string): string | null {
  if (typeof sender !== 'string') return null;
  const s = sender;
  // A wallet's sender id never starts or ends with a space: one that does is not that sender.
  if (s === '' || s.length > MAX_SENDER_LENGTH || !ASCII_NAME_RE.test(s) || s.trim() !== s) return null;
  if (NUMBER_RE.test(s)) {
    const digits = s.replace(/\D/g, '');
    if (!s.startsWith('+') && digits.length <= MAX_SHORT_CODE_DIGITS) return `#${digits}`;
    const phone = parsePhoneNumberFromString(s, { defaultCountry: 'BD' });
    return phone?.isValid() && !phone.ext ? phone.number : plainNumberKey(s);
  }
  return `name:${s.toLowerCase()}`;
}

/** True when both senders have a key and the keys are equal. */
export function sameSender(a: string, b: string): boolean {
  const ka = senderKey(a);
  return ka !== null && ka === senderKey(b);
}
