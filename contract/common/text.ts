import { z } from 'zod';

/**
 * Characters that end or reshape a line wherever text is printed: C0 and C1
 * controls (CR, LF, TAB, ESC...) and the Unicode line and paragraph
 * separators. A name holding one could forge lines in an e-mail, a log or a
 * terminal that shows it.
 */
export const CONTROL_CHARACTERS = /[\p{Cc}\u2028\u2029]/gu;

const NO_CONTROL_CHARACTERS = /^[^\p{Cc}\u2028\u2029]*$/u;

/**
 * A name people give something (a device, a brand, a gateway, an operator):
 * trimmed, 1..max characters, no control characters (refused as a 400 naming
 * the field rather than silently changed, so what is stored is what was sent).
 */
export function nameText(max: number, requiredMessage?: string) {
  return z
    .string()
    .trim()
    .min(1, requiredMessage)
    .max(max)
    .regex(NO_CONTROL_CHARACTERS, 'Must not contain control characters (line breaks, tabs and the like)');
}

/** Text shown where a line break would forge a line (alert e-mails): each control character as a visible `\uXXXX`. */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}
