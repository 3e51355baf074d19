import { normalizePhone } from '../../customers/normalize.ts';

/**
 * Sender-number agreement (docs/matching.md, "Sender number"): the number an
 * SMS names as the payer against the number the customer declared. Both sides
 * are read as Bangladeshi numbers by default and compared in E.164; a masked
 * SMS number (`***515`, `01XXXXXX515`) compares by its visible digits only.
 */

/** Fewest trailing visible digits a masked number needs to say anything: fewer agree with almost anyone. */
export const MIN_VISIBLE_DIGITS = 3;

export type NumberAgreement = 'agree' | 'disagree' | 'unknown';

const MASK_RE = /[x*•#]/i;

/**
 * How an admin answer shows a payer number an SMS names: only the last three
 * digits, enough to compare with a customer's without listing personal data.
 */
export function maskPayerNumber(n: string): string {
  return n.replace(/\d(?=(?:\D*\d){3})/g, '*');
}

/** National digits of an E.164 number as wallets print it (`+8801712345678` -> `01712345678`). */
function nationalDigits(e164: string): string {
  return e164.startsWith('+880') ? `0${e164.slice(4)}` : e164.replace(/\D/g, '');
}

/**
 * An SMS's number -> E.164, or null. Rocket prints its 12-digit account
 * number (the 11-digit phone and a check digit): its first 11 digits are the phone.
 */
export function smsNumberToE164(raw: string): string | null {
  const direct = normalizePhone(raw);
  if (direct) return direct;
  const digits = raw.replace(/[\s-]/g, '');
  if (/^01\d{10}$/.test(digits)) return normalizePhone(digits.slice(0, 11));
  return null;
}

/**
 * 'disagree' only when both sides are readable and the visible digits differ;
 * 'unknown' when either side is missing, unreadable, or masked down to fewer
 * than MIN_VISIBLE_DIGITS trailing digits. Only 'disagree' blocks a match.
 */
export function comparePayerNumbers(smsNumber: string | null, declaredE164: string | null): NumberAgreement {
  if (!smsNumber || !declaredE164) return 'unknown';
  const declared = nationalDigits(declaredE164);
  const text = smsNumber.trim();
  if (MASK_RE.test(text)) {
    const m = /^\+?([\d\s-]*?)[x*•#\s-]*[x*•#][x*•#\s-]*([\d\s-]*)$/i.exec(text);
    if (!m) return 'unknown';
    let prefix = m[1]!.replace(/\D/g, '');
    const suffix = m[2]!.replace(/\D/g, '');
    if (suffix.length < MIN_VISIBLE_DIGITS) return 'unknown';
    if (prefix.startsWith('880')) prefix = prefix.slice(2);
    return declared.endsWith(suffix) && declared.startsWith(prefix) ? 'agree' : 'disagree';
  }
  const sms = smsNumberToE164(text);
  if (!sms) return 'unknown';
  return sms === declaredE164 ? 'agree' : 'disagree';
}
