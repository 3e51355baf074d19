import { AppError } from '../../../contract/common/errors.ts';
import type { SmsDirection } from '../../../contract/admin/gateways.ts';

/**
 * Templates are admin-supplied regexes run against SMS bodies that customers partly
 * write (the payment reference), so they are validated before they are stored:
 * they must compile, expose the groups the parser reads, and avoid the shapes that
 * make backtracking explode.
 */

export const MAX_TEMPLATE_LENGTH = 1000;

/** `g` and `y` make `exec` stateful (lastIndex), which would break re-use of a cached regex. */
const ALLOWED_TEMPLATE_FLAGS = ['i', 'm', 's', 'u'] as const;

const REQUIRED_GROUPS = ['amount', 'trx_id'] as const;
/** Money-out templates need only the amount: some debits (bill pay) carry no usable id. */
const REQUIRED_OUT_GROUPS = ['amount'] as const;
const OPTIONAL_GROUPS = ['sender_number', 'balance', 'fee', 'time'] as const;
const KNOWN_GROUPS: ReadonlySet<string> = new Set([...REQUIRED_GROUPS, ...OPTIONAL_GROUPS]);

export type TemplateDirection = SmsDirection;

/**
 * Kinds of money-in message that are never a customer's payment (a wallet's
 * cashback): they feed the balance chain, as a debit does, and pay nothing.
 */
export const NON_PAYMENT_KINDS: ReadonlySet<string> = new Set(['cashback']);

/** True when a reading may pay a payment: money in, of a kind that is a payment. */
export function paysPayments(r: { direction?: TemplateDirection | null; kind?: string | null }): boolean {
  return (r.direction ?? 'in') === 'in' && !NON_PAYMENT_KINDS.has(r.kind ?? '');
}

export interface SmsTemplateSource {
  pattern: string;
  flags?: string;
  /**
   * `in` (default): a credit that may pay a payment. `out`: Send Money, Cash Out,
   * Payment, bill pay, recharge: evidence for the balance chain, never a match.
   */
  direction?: TemplateDirection;
  /** What the message reports: `received`, `cash_in`, `merchant_payment_received`, `send_money`, `cash_out`, `payment`, `bill_pay`, ... */
  kind?: string;
}

function invalid(message: string): AppError {
  return new AppError('INVALID_SMS_TEMPLATE', message, { field: 'pattern' });
}

function checkFlags(flags: string): void {
  const seen = new Set<string>();
  for (const f of flags) {
    if (!(ALLOWED_TEMPLATE_FLAGS as readonly string[]).includes(f)) {
      throw invalid(`SMS template flag "${f}" is not allowed; allowed flags: ${ALLOWED_TEMPLATE_FLAGS.join(', ')}`);
    }
    if (seen.has(f)) throw invalid(`SMS template flag "${f}" is given twice`);
    seen.add(f);
  }
}

/** Length of a quantifier starting at `i` and whether it can repeat more than once. */
function readQuantifier(src: string, i: number): { length: number; repeats: boolean; unbounded: boolean } | null {
  const c = src[i];
  if (c === '*' || c === '+') return { length: src[i + 1] === '?' ? 2 : 1, repeats: true, unbounded: true };
  if (c === '?') return { length: 1, repeats: false, unbounded: false };
  if (c !== '{') return null;
  const m = /^\{(\d+)(,(\d*))?\}\??/.exec(src.slice(i));
  if (!m) return null;
  const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
  return { length: m[0].length, repeats: max > 1, unbounded: max === Infinity };
}

/**
 * Heuristic for the classic catastrophic shape: a group that contains an unbounded
 * quantifier and is itself repeated, like `(\d+)+` or `(?:a*b?)*`. It does not
 * catch every slow regex (overlapping alternatives), but it catches the common one.
 */
function findNestedQuantifier(src: string): number | null {
  const stack: boolean[] = [false];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '[') {
      i++;
      while (i < src.length && src[i] !== ']') i += src[i] === '\\' ? 2 : 1;
      i++;
      const q = readQuantifier(src, i);
      if (q) {
        if (q.unbounded) stack[stack.length - 1] = true;
        i += q.length;
      }
      continue;
    }
    if (c === '(') {
      stack.push(false);
      i++;
      continue;
    }
    if (c === ')') {
      const inner = stack.length > 1 ? stack.pop()! : false;
      const q = readQuantifier(src, i + 1);
      if (inner && q?.repeats) return i;
      if (inner || q?.unbounded) stack[stack.length - 1] = true;
      i += 1 + (q?.length ?? 0);
      continue;
    }
    const q = readQuantifier(src, i);
    if (q) {
      if (q.unbounded) stack[stack.length - 1] = true;
      i += q.length;
      continue;
    }
    i++;
  }
  return null;
}

/**
 * Validates and compiles a template. Throws `INVALID_SMS_TEMPLATE` (field `pattern`)
 * naming the first problem found. The returned regex has no `g`/`y` flag, so it is
 * safe to cache and share.
 */
export function compileTemplate(source: string, flags = '', direction: TemplateDirection = 'in'): RegExp {
  if (typeof source !== 'string' || source.trim() === '') throw invalid('SMS template pattern is empty');
  if (source.length > MAX_TEMPLATE_LENGTH) {
    throw invalid(`SMS template pattern is ${source.length} characters long; the maximum is ${MAX_TEMPLATE_LENGTH}`);
  }
  checkFlags(flags);

  let regex: RegExp;
  try {
    regex = new RegExp(source, flags);
  } catch (e) {
    throw invalid(`SMS template pattern does not compile: ${(e as Error).message}`);
  }

  // An empty alternative always matches, and `groups` then lists every named group.
  const names = Object.keys(new RegExp(`(?:${source})|`, flags).exec('')?.groups ?? {});
  for (const name of names) {
    if (!KNOWN_GROUPS.has(name)) {
      throw invalid(`SMS template has unknown named group "${name}"; allowed groups: ${[...KNOWN_GROUPS].join(', ')}`);
    }
  }
  for (const name of direction === 'out' ? REQUIRED_OUT_GROUPS : REQUIRED_GROUPS) {
    if (!names.includes(name)) throw invalid(`SMS template must have a named group "${name}", written (?<${name}>...)`);
  }

  const at = findNestedQuantifier(source);
  if (at !== null) {
    throw invalid(
      `SMS template repeats a group that contains an unbounded quantifier (near position ${at}); this can hang on long messages`,
    );
  }
  if (regex.test('')) throw invalid('SMS template matches an empty message; it must require the message text');
  return regex;
}
