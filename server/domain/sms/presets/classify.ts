import { normalizeParsedAmount, normalizeTrxId } from '../parser.ts';
import { compileTemplate, type SmsTemplateSource } from '../template.ts';

export interface SmsClassification {
  direction: 'in' | 'out';
  kind: string | null;
  amount: string;
  trxId: string | null;
  senderNumber: string | null;
  balance: string | null;
  fee: string | null;
  templateIndex: number;
}

const MAX_BODY = 2000;

/** A balance or fee: a plain non-negative two-place amount ("0" included), else null. */
function money(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (/^0+(?:\.0{1,2})?$/.test(raw.trim())) return '0.00';
  return normalizeParsedAmount(raw);
}

function tryTemplate(t: SmsTemplateSource, index: number, body: string): SmsClassification | null {
  let re: RegExp;
  try {
    re = compileTemplate(t.pattern, t.flags ?? '', t.direction ?? 'in');
  } catch {
    return null;
  }
  const g = re.exec(body)?.groups;
  if (!g) return null;
  const direction = t.direction ?? 'in';
  const amount = normalizeParsedAmount(g['amount']);
  const trxId = normalizeTrxId(g['trx_id']);
  if (amount === null || (direction === 'in' && trxId === null)) return null;
  const balance = money(g['balance']);
  // A balance that is present but not a number is not a genuine wallet message.
  if (g['balance'] !== undefined && balance === null) return null;
  return {
    direction,
    kind: t.kind ?? null,
    amount,
    trxId,
    senderNumber: g['sender_number']?.trim() || null,
    balance,
    fee: money(g['fee']),
    templateIndex: index,
  };
}

/**
 * What a message from a wallet's official sender reports, by its templates.
 * Money-out templates are tried first and win: a debit must never be read as a
 * credit, even by an over-broad admin template. Null: no template fits.
 */
export function classifySms(body: string, templates: readonly SmsTemplateSource[]): SmsClassification | null {
  if (typeof body !== 'string' || body.length === 0 || body.length > MAX_BODY) return null;
  const order = [...templates.entries()].sort(([, a], [, b]) => Number((b.direction ?? 'in') === 'out') - Number((a.direction ?? 'in') === 'out'));
  for (const [index, t] of order) {
    const c = tryTemplate(t, index, body);
    if (c) return c;
  }
  return null;
}
