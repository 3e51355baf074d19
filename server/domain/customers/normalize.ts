// The `max` metadata validates numbers against each country's real number ranges
// (01212345678 is not a Bangladeshi mobile number); the default `min` metadata only
// checks lengths. Its size does not matter on a server.
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

/**
 * The WHATWG HTML "valid e-mail address" rule: the pragmatic subset browsers accept,
 * ASCII only. Internationalised addresses are rejected rather than half-supported,
 * since the blind index needs one canonical form per address.
 */
const EMAIL_RE =
  /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * Trimmed and lower-cased, so the blind index finds `Alice@Example.com ` under
 * `alice@example.com`. Lower-casing the local part is technically lossy (RFC 5321
 * lets it be case-sensitive) but no real provider relies on that, and two
 * customers differing only by case would be a worse surprise. Null when invalid.
 */
export function normalizeEmail(s: string): string | null {
  const email = s.trim().toLowerCase();
  if (email.length > 254 || !EMAIL_RE.test(email)) return null;
  if (email.slice(0, email.indexOf('@')).length > 64) return null;
  return email;
}

/**
 * Digits with the usual separators only: libphonenumber would otherwise pull a
 * number out of free text ("call 01712345678") or accept an extension.
 */
const PHONE_CHARS_RE = /^\+?[\p{Nd}\s().-]+$/u;

/**
 * E.164 (`+8801712345678`), or null when the text is not a valid number. National
 * forms (`01712345678`, `017-1234-5678`) are read in `defaultRegion`; `880…` and
 * `00880…` without the plus are understood too.
 */
export function normalizePhone(s: string, defaultRegion: CountryCode = 'BD'): string | null {
  const text = s.trim();
  if (text.length === 0 || text.length > 32 || !PHONE_CHARS_RE.test(text)) return null;
  const phone = parsePhoneNumberFromString(text, { defaultCountry: defaultRegion });
  if (!phone || !phone.isValid() || phone.ext) return null;
  return phone.number;
}

/** `jane@example.com` -> `j***@example.com`: the domain stays, it helps support staff. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${[...email][0]}***${email.slice(at)}`;
}

const PHONE_KEEP_START = 2;
const PHONE_KEEP_END = 3;
const PHONE_MIN_MASKED = 3;

/**
 * `+8801712345678` -> `+88017*****678`: country code, the first two national
 * digits (the operator) and the last three stay. Short numbers keep fewer digits so
 * at least three are always hidden.
 */
export function maskPhone(e164: string): string {
  const phone = parsePhoneNumberFromString(e164.trim());
  if (!phone) {
    const digits = e164.replace(/\D/g, '');
    return digits.length > 5 ? `${'*'.repeat(digits.length - 2)}${digits.slice(-2)}` : '***';
  }
  const national = phone.nationalNumber;
  let start = PHONE_KEEP_START;
  let end = PHONE_KEEP_END;
  while (start + end > 0 && national.length - start - end < PHONE_MIN_MASKED) {
    if (start >= end) start--;
    else end--;
  }
  const hidden = national.length - start - end;
  return `+${phone.countryCallingCode}${national.slice(0, start)}${'*'.repeat(hidden)}${end > 0 ? national.slice(-end) : ''}`;
}

/** The routing rule for `GET /customers/{identifier}` (README.md, Merchant API): a uuid is the customer's id, else `@` means email, else a phone. */
export function isUuidIdentifier(s: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
}

/** Not a uuid: `@` means an email, anything else a phone. */
export function isEmailIdentifier(s: string): boolean {
  return s.includes('@');
}
