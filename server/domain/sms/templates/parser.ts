import { MAX_AMOUNT_INTEGER_DIGITS } from '../../../../contract/common/money.ts';
import { isPositive, toMoney } from '../../money/decimal.ts';
import { sameSender, senderKey } from './senders.ts';
import { compileTemplate, paysPayments, type CompiledTemplate, type SmsTemplateSource } from './template.ts';
import { parseStatedTime } from '../matching/stated-time.ts';

/** Real SMS (even concatenated) are far shorter; a cap bounds regex time on hostile input. */
export const MAX_SMS_BODY_LENGTH = 2000;
const MAX_TRX_ID_LENGTH = 64;

export interface GatewayParseConfig {
  id: number;
  /** Official sender ids of the gateway; messages from any other sender are ignored. */
  senders: string[];
  /** Tried in order; the first that yields a valid amount and trx id wins. */
  templates: SmsTemplateSource[];
}

export interface ParsedSms {
  gatewayId: number;
  /** `in`: a credit that may pay a payment; `out`: Send Money, Cash Out, Payment... evidence for the balance chain only. */
  direction: 'in' | 'out';
  /** The template's `kind` (`received`, `send_money`...), when it names one. */
  kind: string | null;
  /** Two-place decimal string, e.g. "1250.00". */
  amount: string;
  /** Trimmed and upper-cased, the form stored and compared everywhere. Always present for `in`; may be null for `out`. */
  trxId: string | null;
  /** The payer's (or, for `out`, the recipient's) number as written, possibly masked (`***515`). */
  senderNumber: string | null;
  /** Balance after the movement, two places, or null when the template has no balance or it was not a number. */
  balance: string | null;
  /** True when the template captured a balance that is not a number: never certain evidence. */
  balanceUnreadable: boolean;
  /** Fee as written (two places), null when none. */
  fee: string | null;
  /** Index into the gateway's `templates`, so a record can say which one matched. */
  templateIndex: number;
  /**
   * The latest moment the time the SMS states in its text (the `time` group, stated-time.ts) can stand for
   * (a time to the minute stands for its whole minute), or null when the template reads none or it is no date.
   */
  statedAt: Date | null;
}

/**
 * Folded form of a sender used only inside the duplicate-detection content hash
 * (changing it would change the hashes of stored records). Whether a sender is a
 * gateway's official one is decided by `sameSender` (senders.ts), never by this.
 */
export function normalizeSender(sender: string): string {
  return sender.normalize('NFKC').replace(/\s+/g, '').toLowerCase();
}

/** Plain digits, or consistent western (1,250,000) or South Asian (12,50,000) grouping. */
const AMOUNT_RE = /^(?:\d+|\d{1,3}(?:,\d{3})+|\d{1,2}(?:,\d{2})*,\d{3})(?:\.\d{1,2})?$/;

/**
 * An amount as written in an SMS -> "1250.00", or null when it is not a plausible
 * positive amount. More than two decimals is refused rather than rounded: a
 * rounded amount could then match a transaction it does not belong to.
 */
export function normalizeParsedAmount(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const s = raw.trim();
  if (!AMOUNT_RE.test(s)) return null;
  const plain = s.replace(/,/g, '');
  const integerDigits = plain.split('.')[0]!.replace(/^0+(?=\d)/, '');
  if (integerDigits.length > MAX_AMOUNT_INTEGER_DIGITS) return null;
  return isPositive(plain) ? toMoney(plain) : null;
}

/**
 * A balance or fee as written -> "5432.10" (zero allowed), or null. Same
 * grouping rules as amounts; anything else (words, signs, three decimals) is null.
 */
function normalizeParsedBalance(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const s = raw.trim();
  if (!AMOUNT_RE.test(s)) return null;
  const plain = s.replace(/,/g, '');
  const integerDigits = plain.split('.')[0]!.replace(/^0+(?=\d)/, '');
  if (integerDigits.length > MAX_AMOUNT_INTEGER_DIGITS + 2) return null;
  return toMoney(plain);
}

function normalizeTrxId(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const s = raw.trim().toUpperCase();
  return s === '' || s.length > MAX_TRX_ID_LENGTH ? null : s;
}

// Templates are stored as strings; compiling each per message would be wasteful.
const cache = new Map<string, CompiledTemplate | null>();
const CACHE_LIMIT = 500;

function compiled(t: SmsTemplateSource): CompiledTemplate | null {
  const key = `${t.direction ?? 'in'}/${t.flags ?? ''}/${t.pattern}`;
  let re = cache.get(key);
  if (re === undefined) {
    try {
      re = compileTemplate(t.pattern, t.flags ?? '', t.direction ?? 'in');
    } catch {
      // Templates are validated when saved; one that no longer validates must not
      // make a whole forwarded batch fail, so it simply never matches.
      re = null;
    }
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, re);
  }
  return re;
}

function statedUpTo(raw: string | undefined): Date | null {
  const stated = parseStatedTime(raw);
  return stated === null ? null : new Date(stated.at.getTime() + stated.precisionMs - 1);
}

/**
 * Finds the first gateway whose official senders include the SMS sender and whose
 * template yields a valid amount (and, for money in, a trx id). Money-out
 * readings, and credits that are never a payment (template.ts
 * `NON_PAYMENT_KINDS`), are returned too: the caller records them in the
 * balance chain and never matches them. Such a reading by any gateway of the
 * sender wins over every payment reading, whichever gateway comes first.
 * Null means `no_match`.
 */
export function parseSms(
  sms: { sender: string; body: string },
  gateways: readonly GatewayParseConfig[],
): ParsedSms | null {
  if (typeof sms.body !== 'string' || sms.body.length > MAX_SMS_BODY_LENGTH) return null;
  const sender = sms.sender ?? '';
  if (senderKey(sender) === null) return null;

  // A money-out message (Send Money, Payment, bill pay) must never read as a credit:
  // when an `out` template of any of the sender's gateways reads it, the `out` reading
  // wins (it never pays anything).
  let credit: ParsedSms | null = null;
  for (const gateway of gateways) {
    if (!gateway.senders.some((s) => sameSender(s, sender))) continue;
    for (const [templateIndex, template] of gateway.templates.entries()) {
      if (credit !== null && paysPayments(template)) continue;
      const groups = compiled(template)?.exec(sms.body)?.groups;
      if (!groups) continue;
      const direction = template.direction ?? 'in';
      const amount = normalizeParsedAmount(groups['amount']);
      const trxId = normalizeTrxId(groups['trx_id']);
      if (amount === null || (trxId === null && direction === 'in')) continue;
      const rawBalance = groups['balance'];
      const balance = normalizeParsedBalance(rawBalance);
      const fee = normalizeParsedBalance(groups['fee']);
      const reading: ParsedSms = {
        gatewayId: gateway.id,
        direction,
        kind: template.kind ?? null,
        amount,
        trxId,
        senderNumber: groups['sender_number']?.trim() || null,
        balance,
        balanceUnreadable: rawBalance !== undefined && balance === null,
        fee,
        templateIndex,
        statedAt: statedUpTo(groups['time']),
      };
      // A debit, or a credit that is never a payment (cashback), wins: it never pays anything.
      if (!paysPayments(reading)) return reading;
      credit = reading;
    }
  }
  return credit;
}
