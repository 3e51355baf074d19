import { sameSender } from '../sms/wording.ts';
import type { FilterRules } from './defaults.ts';

export type ScreenResult = { forward: true } | { forward: false; reason: 'sender_not_allowed' | 'negative_keyword' | 'no_positive_keyword' };

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A keyword matches as a whole word or phrase, case-insensitively, with any run
 * of spaces inside a phrase matching any whitespace. "Whole word" is Unicode
 * aware (letters, combining marks and digits on either side prevent a match), so
 * `PIN` does not exclude "shopping" and Bangla keywords are not cut inside a word.
 */
function keywordPattern(keyword: string): RegExp {
  const body = keyword
    .trim()
    .split(/\s+/)
    .map(escapeRegExp)
    .join('\\s+');
  return new RegExp(`(?<![\\p{L}\\p{M}\\p{N}])${body}(?![\\p{L}\\p{M}\\p{N}])`, 'iu');
}

/**
 * Each keyword's pattern, built once per keyword text rather than for every SMS
 * screened: a pattern depends on its keyword alone, and without the `g` or `y`
 * flag `test` keeps no state between calls, so one RegExp serves every caller.
 * Bounded: emptied when it reaches MAX_CACHED_PATTERNS keywords.
 */
const patterns = new Map<string, RegExp>();
const MAX_CACHED_PATTERNS = 10_000;
function patternOf(keyword: string): RegExp {
  let pattern = patterns.get(keyword);
  if (!pattern) {
    if (patterns.size >= MAX_CACHED_PATTERNS) patterns.clear();
    patterns.set(keyword, (pattern = keywordPattern(keyword.normalize('NFC'))));
  }
  return pattern;
}

export function containsKeyword(text: string, keywords: readonly string[]): boolean {
  const normalized = text.normalize('NFC');
  return keywords.some((k) => k.trim() !== '' && patternOf(k).test(normalized));
}

/**
 * The screening the companion app performs before forwarding, as the rules
 * document it: the sender must be allowed (compared like gateway senders; an
 * empty list allows no sender: a brand with no wallet gateway has nothing to
 * forward), no negative keyword may appear (negative
 * wins over positive), and at least one positive keyword must appear when the
 * list is not empty.
 */
export function screenSms(rules: Pick<FilterRules, 'allowedSenders' | 'positiveKeywords' | 'negativeKeywords'>, sms: { sender: string; body: string }): ScreenResult {
  if (!rules.allowedSenders.some((s) => sameSender(s, sms.sender))) return { forward: false, reason: 'sender_not_allowed' };
  if (containsKeyword(sms.body, rules.negativeKeywords)) return { forward: false, reason: 'negative_keyword' };
  if (rules.positiveKeywords.length > 0 && !containsKeyword(sms.body, rules.positiveKeywords)) return { forward: false, reason: 'no_positive_keyword' };
  return { forward: true };
}
