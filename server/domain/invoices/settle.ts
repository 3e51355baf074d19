import type { Mode } from '../../../contract/vocabulary.ts';
import type { Db } from '../db.ts';
import { addMoney, compareMoney } from '../money/decimal.ts';
import { addInvoicePayment, invoicePaymentsOf, invoicesToSettle, lockInvoices } from './queries.ts';
import { amountRemaining, invoiceNumber } from './totals.ts';

/**
 * What a completed payment does to the invoice it pays. Called by the one
 * completion path (payments/transactions.ts completeLockedTransactions), in its
 * database transaction, with the intents it just completed: each invoice's
 * amount paid grows by its payments' amounts (the intent is made in the
 * invoice's currency, pay.ts), and an open or overdue invoice whose payments
 * reach the total becomes `paid`, with one `invoice.paid` event. A void
 * invoice records the money (so an operator sees it, to refund) and stays void.
 * Refunds do not reopen an invoice: the money asked for was received, and a
 * refund is the merchant's decision about it, recorded on the payment.
 */

/** An event to record with the completions' own (the caller records them together). */
export interface InvoiceEvent {
  brandId: number;
  mode: Mode;
  event: 'invoice.paid';
  data: Record<string, unknown>;
}

export async function settleInvoicePayments(tx: Db, intentIds: readonly number[]): Promise<InvoiceEvent[]> {
  if (intentIds.length === 0) return [];
  const paid = await invoicePaymentsOf(tx, intentIds);
  if (paid.length === 0) return [];
  const byInvoice = new Map<number, { amount: string; paymentUuid: string }>();
  for (const p of paid) {
    const prev = byInvoice.get(p.invoice_id!);
    byInvoice.set(p.invoice_id!, { amount: prev ? addMoney(prev.amount, p.amount) : p.amount, paymentUuid: p.uuid });
  }
  // Locked in a statement of its own, in id order (no deadlock between two completions), then read as committed.
  const ids = [...byInvoice.keys()].sort((a, b) => a - b);
  await lockInvoices(tx, ids);
  const invoices = await invoicesToSettle(tx, ids);
  const events: InvoiceEvent[] = [];
  for (const v of invoices) {
    const add = byInvoice.get(v.id)!;
    const amountPaid = addMoney(v.amount_paid, add.amount);
    const nowPaid = (v.status === 'open' || v.status === 'overdue') && compareMoney(amountPaid, v.total) >= 0;
    await addInvoicePayment(tx, v.id, amountPaid, nowPaid);
    if (!nowPaid) continue;
    events.push({
      brandId: v.brand_id,
      mode: v.mode,
      event: 'invoice.paid',
      data: {
        invoice_id: v.uuid, number: invoiceNumber(v.number), status: 'paid', customer_id: v.customer_uuid, currency: v.currency, total: v.total,
        amount_paid: amountPaid, amount_remaining: amountRemaining(v.total, amountPaid), due_date: v.due_day, payment_id: add.paymentUuid,
      },
    });
  }
  return events;
}
