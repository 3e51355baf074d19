/**
 * The screening a companion app must do before forwarding an SMS, as the
 * filter rules (`GET /config/filter-rules`) document it. It runs on the phone,
 * so a message carrying a one-time code or PIN never leaves it. A parity test
 * keeps it equal to the service's own reference implementation.
 */

/** The rule fields screening reads, as `filterRules.get()` returns them. */
export interface SmsFilterRules {
  allowed_senders: readonly string[];
  positive_keywords: readonly string[];
  negative_keywords: readonly string[];
}

export type ScreenReason = 'sender_not_allowed' | 'negative_keyword' | 'no_positive_keyword';
export type ScreenResult = { forward: true } | { forward: false; reason: ScreenReason };

const NUMBER_RE = /^\+?[0-9][0-9 ().-]*$/;
const ASCII_NAME_RE = /^[\x20-\x7e]+$/;

/**
 * The comparison key of a sender, or null when it equals nothing. Names are
 * printable ASCII compared case-insensitively and nothing else, so a fullwidth
 * or look-alike `ｂＫａｓｈ` never equals `bKash`; numbers compare as E.164
 * (Bangladeshi national forms `01847-348685` = `+8801847348685`); short codes
 * (`16216`) as their digits. Nothing is trimmed: a sender with a leading or
 * trailing space, or any character outside printable ASCII (U+FEFF, a Unicode
 * space, a zero-width or bidi control), equals nothing. The service applies the
 * same rule.
 */
export function senderKey(sender: string): string | null {
  if (typeof sender !== 'string') return null;
  const s = sender;
  if (s === '' || s.length > 64 || !ASCII_NAME_RE.test(s) || s.trim() !== s) return null;
  if (NUMBER_RE.test(s)) {
    let digits = s.replace(/\D/g, '');
    if (s.startsWith('+')) return `+${digits}`;
    if (digits.length <= 6) return `#${digits}`;
    if (digits.startsWith('00')) digits = digits.slice(2);
    else if (/^01\d{9}$/.test(digits)) digits = `88${digits}`;
    return `+${digits}`;
  }
  return `name:${s.toLowerCase()}`;
}

/** True when both senders have a key and the keys are equal. */
export function sameSender(a: string, b: string): boolean {
  const ka = senderKey(a);
  return ka !== null && ka === senderKey(b);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whole word or phrase, case-insensitive; a space in a phrase matches any
 * whitespace; letters, combining marks or digits on either side prevent a match
 * (so `PIN` does not exclude "shopping", and Bangla words are not cut).
 */
function keywordPattern(keyword: string): RegExp {
  const body = keyword.trim().split(/\s+/).map(escapeRegExp).join('\\s+');
  return new RegExp(`(?<![\\p{L}\\p{M}\\p{N}])${body}(?![\\p{L}\\p{M}\\p{N}])`, 'iu');
}

export function containsKeyword(text: string, keywords: readonly string[]): boolean {
  const normalized = text.normalize('NFC');
  return keywords.some((k) => k.trim() !== '' && keywordPattern(k.normalize('NFC')).test(normalized));
}

/**
 * Forward only when the sender is allowed (an empty list allows no sender), no
 * negative keyword appears (negative always wins) and, when positive keywords
 * are set, at least one appears.
 */
export function screenSms(rules: SmsFilterRules, sms: { sender: string; body: string }): ScreenResult {
  if (!rules.allowed_senders.some((s) => sameSender(s, sms.sender))) return { forward: false, reason: 'sender_not_allowed' };
  if (containsKeyword(sms.body, rules.negative_keywords)) return { forward: false, reason: 'negative_keyword' };
  if (rules.positive_keywords.length > 0 && !containsKeyword(sms.body, rules.positive_keywords)) {
    return { forward: false, reason: 'no_positive_keyword' };
  }
  return { forward: true };
}
