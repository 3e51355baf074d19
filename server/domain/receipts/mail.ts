import { escapeControlCharacters } from '../../../contract/common/text.ts';
import { formatAmount, formatMoment } from '../display.ts';

/** What a receipt says: read from the completion's event when the receipt is sent (send-receipt.job.ts). */
export interface ReceiptContent {
  kind: 'payment' | 'refund';
  test: boolean;
  brandName: string;
  timeZone: string;
  amount: string;
  currency: string | null;
  /** The service's reference of the payment's transaction (what the customer saw at checkout). */
  trxId: string;
  /** The wallet's own reference of the money, when known. */
  gatewayTrxId: string | null;
  gateway: string | null;
  reference: string | null;
  /** When the payment or refund completed. */
  at: Date;
  /** The payment's page (it shows the payment as paid), when there is one. */
  paymentUrl: string | null;
}

/**
 * A plain-text receipt. Every value comes from the merchant's or the wallet's
 * data, so each is printed with its control characters escaped: a line break
 * in a reference cannot forge a line of the receipt or a header.
 */
export function renderReceipt(r: ReceiptContent): { subject: string; text: string } {
  const show = (v: string) => escapeControlCharacters(v);
  const money = `${formatAmount(r.amount)}${r.currency ? ` ${r.currency}` : ''}`;
  const subject = `${r.test ? '[TEST] ' : ''}${r.kind === 'payment' ? 'Receipt' : 'Refund'} from ${show(r.brandName)}: ${money}`;
  const lines = [
    show(r.brandName),
    '',
    r.kind === 'payment' ? `Thank you: your payment of ${money} was received.` : `Your refund of ${money} was completed.`,
    '',
    `Amount: ${money}`,
    ...(r.gateway ? [`Paid with: ${show(r.gateway)}`] : []),
    `Transaction: ${show(r.trxId)}`,
    ...(r.gatewayTrxId ? [`Wallet transaction ID: ${show(r.gatewayTrxId)}`] : []),
    ...(r.reference ? [`Order reference: ${show(r.reference)}`] : []),
    `Date: ${formatMoment(r.at.toISOString(), r.timeZone)}`,
    ...(r.paymentUrl ? ['', `Your payment: ${r.paymentUrl}`] : []),
    ...(r.test ? ['', 'This is a TEST receipt: the payment was made in test mode and no money moved.'] : []),
    '',
    `Keep this e-mail for your records. Questions about it go to ${show(r.brandName)}.`,
  ];
  return { subject, text: `${lines.join('\n')}\n` };
}
