import { AppError } from '../../../../contract/common/errors.ts';
import type { SmsDirection } from '../../../../contract/vocabulary.ts';
import { RE2JS } from 're2js';
import { GATEWAY_PRESETS } from './presets/list.ts';

/**
 * Templates are admin-supplied regexes run against SMS bodies that customers partly
 * write (the payment reference). A backtracking engine (V8's) can take exponential
 * or high-polynomial time on such a body for shapes no syntactic check catches
 * reliably (`(?:\w|\d)*`, `\d*\d*\d*`), and a regex runs on the event loop, so
 * one slow template stalls every request. Admin templates therefore run on RE2
 * (re2js, a pure-JS port: nothing native to build or download), whose matching
 * time is linear in the body; a pattern RE2 cannot express (lookahead,
 * backreferences) is refused. The built-in preset templates need lookahead and are
 * reviewed code with bounded quantifiers only, so exactly those strings run on V8.
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

/** What the parser needs of a compiled template, whichever engine runs it. */
export interface CompiledTemplate {
  exec(body: string): { groups?: Record<string, string | undefined> } | null;
  test(body: string): boolean;
}

const RE2_FLAGS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

/** `flags/pattern` of every built-in preset template: the only sources run on the backtracking engine. */
let presetSources: ReadonlySet<string> | undefined;
function isPresetSource(source: string, flags: string): boolean {
  presetSources ??= new Set(GATEWAY_PRESETS.flatMap((p) => p.templates.map((t) => `${t.flags ?? ''}/${t.pattern}`)));
  return presetSources.has(`${flags}/${source}`);
}

function compileRe2(source: string, flags: string): { regex: CompiledTemplate; names: string[] } {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, [...flags].reduce((acc, f) => acc | (RE2_FLAGS[f] ?? 0), 0));
  } catch (e) {
    throw invalid(
      `SMS template pattern does not compile on the linear-time engine (it has no lookahead and no backreferences): ${(e as Error).message}`,
    );
  }
  const regex: CompiledTemplate = {
    exec: (body) => re.exec(body) as { groups?: Record<string, string | undefined> } | null,
    test: (body) => re.test(body),
  };
  return { regex, names: Object.keys(re.namedGroups()) };
}

function compileBuiltIn(source: string, flags: string): { regex: CompiledTemplate; names: string[] } {
  const regex = new RegExp(source, flags);
  // An empty alternative always matches, and `groups` then lists every named group.
  return { regex, names: Object.keys(new RegExp(`(?:${source})|`, flags).exec('')?.groups ?? {}) };
}

/**
 * Validates and compiles a template. Throws `INVALID_SMS_TEMPLATE` (field `pattern`)
 * naming the first problem found. The result keeps no match state, so it is safe to
 * cache and share. This is the one place a template becomes something that runs.
 */
export function compileTemplate(source: string, flags = '', direction: TemplateDirection = 'in'): CompiledTemplate {
  if (typeof source !== 'string' || source.trim() === '') throw invalid('SMS template pattern is empty');
  if (source.length > MAX_TEMPLATE_LENGTH) {
    throw invalid(`SMS template pattern is ${source.length} characters long; the maximum is ${MAX_TEMPLATE_LENGTH}`);
  }
  checkFlags(flags);

  const { regex, names } = isPresetSource(source, flags) ? compileBuiltIn(source, flags) : compileRe2(source, flags);
  for (const name of names) {
    if (!KNOWN_GROUPS.has(name)) {
      throw invalid(`SMS template has unknown named group "${name}"; allowed groups: ${[...KNOWN_GROUPS].join(', ')}`);
    }
  }
  for (const name of direction === 'out' ? REQUIRED_OUT_GROUPS : REQUIRED_GROUPS) {
    if (!names.includes(name)) throw invalid(`SMS template must have a named group "${name}", written (?<${name}>...)`);
  }
  if (regex.test('')) throw invalid('SMS template matches an empty message; it must require the message text');
  return regex;
}
