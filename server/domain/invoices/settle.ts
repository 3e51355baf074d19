import { sql } from 'kysely';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { Db } from '../db.ts';
import { addMoney, compareMoney } from '../money/decimal.ts';
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
  const paid = await tx
    .selectFrom('payment_intents')
    .select(['invoice_id', 'amount', 'uuid'])
    .where('id', 'in', [...intentIds])
    .where('invoice_id', 'is not', null)
    .orderBy('id')
    .execute();
  if (paid.length === 0) return [];
  const byInvoice = new Map<number, { amount: string; paymentUuid: string }>();
  for (const p of paid) {
    const prev = byInvoice.get(p.invoice_id!);
    byInvoice.set(p.invoice_id!, { amount: prev ? addMoney(prev.amount, p.amount) : p.amount, paymentUuid: p.uuid });
  }
  // Locked in a statement of its own, in id order (no deadlock between two completions), then read as committed.
  const ids = [...byInvoice.keys()].sort((a, b) => a - b);
  await tx.selectFrom('invoices').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
  const invoices = await tx
    .selectFrom('invoices as v')
    .innerJoin('customers as c', 'c.id', 'v.customer_id')
    .select(['v.id', 'v.uuid', 'v.brand_id', 'v.mode', 'v.number', 'v.status', 'v.currency', 'v.total', 'v.amount_paid', 'c.uuid as customer_uuid'])
    .select(sql<string>`to_char(v.due_date, 'YYYY-MM-DD')`.as('due_day'))
    .where('v.id', 'in', ids)
    .execute();
  const events: InvoiceEvent[] = [];
  for (const v of invoices) {
    const add = byInvoice.get(v.id)!;
    const amountPaid = addMoney(v.amount_paid, add.amount);
    const nowPaid = (v.status === 'open' || v.status === 'overdue') && compareMoney(amountPaid, v.total) >= 0;
    await tx
      .updateTable('invoices')
      .set({ amount_paid: amountPaid, updated_at: sql<Date>`now()`, ...(nowPaid ? { status: 'paid' as const, paid_at: sql<Date>`now()` } : {}) })
      .where('id', '=', v.id)
      .execute();
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
