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

/** Senders compare ignoring case, spaces and compatibility forms (`bKash` = `BKASH` = `b Kash`). */
export function normalizeSender(sender: string): string {
  return sender.normalize('NFKC').replace(/\s+/g, '').toLowerCase();
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
 * Forward only when the sender is allowed (an empty list allows all), no
 * negative keyword appears (negative always wins) and, when positive keywords
 * are set, at least one appears.
 */
export function screenSms(rules: SmsFilterRules, sms: { sender: string; body: string }): ScreenResult {
  if (rules.allowed_senders.length > 0) {
    const sender = normalizeSender(sms.sender);
    if (!rules.allowed_senders.some((s) => normalizeSender(s) === sender)) return { forward: false, reason: 'sender_not_allowed' };
  }
  if (containsKeyword(sms.body, rules.negative_keywords)) return { forward: false, reason: 'negative_keyword' };
  if (rules.positive_keywords.length > 0 && !containsKeyword(sms.body, rules.positive_keywords)) {
    return { forward: false, reason: 'no_positive_keyword' };
  }
  return { forward: true };
}
