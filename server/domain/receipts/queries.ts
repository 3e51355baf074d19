import { sql } from 'kysely';
import type { ReceiptStatus } from '../../../contract/vocabulary.ts';
import type { Db } from '../db.ts';

/** The `receipts` table: which completed payments and refunds a customer is sent a receipt for. */

/** Receipts are made for events at most this old: a sweep that was down for longer does not mail customers about last week. */
const RECENT = sql`interval '2 days'`;

/**
 * Makes the receipts of the completed payments and refunds of brands that send
 * receipts, recorded since the brand switched them on (never a sample event),
 * not made yet; returns their ids. At most `limit` per call, oldest first.
 */
export async function insertDueReceipts(tx: Db, limit: number): Promise<number[]> {
  const rows = await tx
    .insertInto('receipts')
    .columns(['brand_id', 'event_id', 'kind', 'mode'])
    .expression((eb) =>
      eb
        .selectFrom('webhook_events as e')
        .innerJoin('brands as b', 'b.id', 'e.brand_id')
        .select(['e.brand_id', 'e.id'])
        .select(sql<'payment' | 'refund'>`CASE WHEN e.event = 'payment.completed' THEN 'payment' ELSE 'refund' END`.as('kind'))
        .select('e.mode')
        .where('b.receipts_enabled', '=', true)
        .where('e.event', 'in', ['payment.completed', 'refund.completed'])
        .where('e.is_test', '=', false)
        .where(sql<boolean>`e.created_at >= b.receipts_enabled_at`)
        .where(sql<boolean>`e.created_at > now() - ${RECENT}`)
        .where((w) => w.not(w.exists(w.selectFrom('receipts as r').select('r.id').whereRef('r.event_id', '=', 'e.id'))))
        .orderBy('e.id')
        .limit(limit),
    )
    .onConflict((oc) => oc.column('event_id').doNothing())
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * What the receipt says, read when it is sent: the event's body, the brand, and
 * the payment's customer (e-mail as a cipher token with what binds it) and time
 * zone; for a refund, the refunded transaction's currency and payment.
 */
export async function receiptToSend(db: Db, receiptId: number) {
  return db
    .selectFrom('receipts as r')
    .innerJoin('webhook_events as e', 'e.id', 'r.event_id')
    .innerJoin('brands as b', 'b.id', 'r.brand_id')
    .leftJoin('transactions as t', 't.id', 'e.transaction_id')
    .leftJoin('gateways as g', 'g.id', 't.gateway_id')
    .leftJoin('payment_intents as i', 'i.id', 't.intent_id')
    .leftJoin('customers as c', 'c.id', 'i.customer_id')
    .select(['r.id', 'r.kind', 'r.mode', 'r.status', 'r.attempts', 'e.payload', 'e.created_at as event_at', 'b.name as brand_name', 'b.timezone', 'b.id as brand_id'])
    .select(['t.currency as transaction_currency', 'g.name as gateway_name', 'i.uuid as payment_id', 'c.uuid as customer_uuid', 'c.email_encrypted'])
    .where('r.id', '=', receiptId)
    .executeTakeFirst();
}

/** Counts an attempt on a pending receipt; its attempt number, or null when it is not pending (sent, given up, or unknown). */
export async function startReceiptAttempt(db: Db, receiptId: number): Promise<number | null> {
  const row = await db
    .updateTable('receipts')
    .set({ attempts: sql<number>`attempts + 1` })
    .where('id', '=', receiptId)
    .where('status', '=', 'pending')
    .returning('attempts')
    .executeTakeFirst();
  return row?.attempts ?? null;
}

export async function finishReceipt(db: Db, receiptId: number, outcome: { status: ReceiptStatus; error?: string | null }): Promise<void> {
  await db
    .updateTable('receipts')
    .set({ status: outcome.status, last_error: outcome.error ?? null, ...(outcome.status === 'sent' ? { sent_at: sql<Date>`now()` } : {}) })
    .where('id', '=', receiptId)
    .execute();
}
