import { parseSms, type ParsedSms } from '../parser.ts';
import type { SmsTemplateSource } from '../template.ts';

export type SmsClassification = Pick<ParsedSms, 'direction' | 'kind' | 'amount' | 'trxId' | 'senderNumber' | 'balance' | 'fee' | 'templateIndex'>;

/** Any sender id that passes the sender rule: classification is by template only. */
const SENDER = 'preset';

/**
 * What a message from a wallet's official sender reports, by its templates:
 * the production parser (parseSms) run on one wallet, so fixtures test exactly
 * what the service does. Money-out readings win over credits there. A reading
 * whose balance is not a number is no genuine wallet message: null, like no fit.
 */
export function classifySms(body: string, templates: readonly SmsTemplateSource[]): SmsClassification | null {
  if (typeof body !== 'string' || body.length === 0) return null;
  const p = parseSms({ sender: SENDER, body }, [{ id: 0, senders: [SENDER], templates: [...templates] }]);
  if (p === null || p.balanceUnreadable) return null;
  return {
    direction: p.direction,
    kind: p.kind,
    amount: p.amount,
    trxId: p.trxId,
    senderNumber: p.senderNumber,
    balance: p.balance,
    fee: p.fee,
    templateIndex: p.templateIndex,
  };
}
