import { sql } from 'kysely';
import type { Mode } from '../../../contract/vocabulary.ts';
import { utcDayAfter, utcDayStart, type Db } from '../db.ts';
import { scopeParam } from '../brands/scope.ts';
import type { RefundStatus } from './entities.ts';

/** Refunds as the merchant API and the console read and write them (refunds/service.ts, refunds/admin.ts). */

/** The refund (`r`) with its transaction's references; add a where on `r` or `t`. */
function refundQuery(em: Db) {
  return em
    .selectFrom('refunds as r')
    .innerJoin('transactions as t', 't.id', 'r.transaction_id')
    .innerJoin('gateways as g', 'g.id', 't.gateway_id')
    .select([
      'r.id', 'r.uuid', 'r.brand_id', 'r.mode', 'r.transaction_id', 't.trx_id', 't.gateway_trx_id', 'r.amount', 'r.currency', 'r.reason', 'r.status',
      'r.failure_reason', 'r.processed_at', 'r.created_at', 'g.type as gateway_type', 'r.completion_reference', 'r.completion_note',
    ]);
}

export type RefundRow = Awaited<ReturnType<ReturnType<typeof refundQuery>['executeTakeFirstOrThrow']>>;

export interface TransactionRef {
  id: number;
  status: string;
  amount: string;
  currency: string;
}

/** The brand's transactions with this service reference (`trx_id`). */
export async function transactionsByTrxId(em: Db, brandId: number, mode: Mode, trxId: string): Promise<TransactionRef[]> {
  return em.selectFrom('transactions').select(['id', 'status', 'amount', 'currency']).where('brand_id', '=', brandId).where('mode', '=', mode).where('trx_id', '=', trxId).execute();
}

/** The brand's transactions whose gateway reference matches (case-insensitively; two gateways may use the same id), in id order. */
export async function transactionsByGatewayTrxId(em: Db, brandId: number, mode: Mode, ref: string): Promise<TransactionRef[]> {
  return em
    .selectFrom('transactions')
    .select(['id', 'status', 'amount', 'currency'])
    .where('brand_id', '=', brandId)
    .where('mode', '=', mode)
    .where(sql<string>`upper(gateway_trx_id)`, '=', sql<string>`upper(${ref})`)
    .where('gateway_trx_id', 'is not', null)
    .orderBy('id')
    .execute();
}

/**
 * The payment (intent) with this public id of the brand and mode, with its
 * completed transaction when it has one (at most one per payment, a database
 * constraint), else its latest; the transaction's columns are null when the
 * payment has none. Undefined: no such payment.
 */
export async function paymentTransaction(em: Db, brandId: number, mode: Mode, paymentId: string) {
  return em
    .selectFrom('payment_intents as i')
    .leftJoin('transactions as t', 't.intent_id', 'i.id')
    .select(['i.id as intent_id', 't.id', 't.status', 't.amount', 't.currency'])
    .where('i.uuid', '=', paymentId)
    .where('i.brand_id', '=', brandId)
    .where('i.mode', '=', mode)
    .orderBy(sql`(t.status = 'completed')`, sql`desc nulls last`)
    .orderBy('t.created_at', 'desc')
    .orderBy('t.id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The latest refund of any of these transactions. */
export async function latestRefundOf(em: Db, transactionIds: number[]): Promise<RefundRow | undefined> {
  return refundQuery(em)
    .where('r.transaction_id', 'in', transactionIds)
    .orderBy('r.created_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function selectRefund(em: Db, refundId: number): Promise<RefundRow | undefined> {
  return refundQuery(em).where('r.id', '=', refundId).executeTakeFirst();
}

/** The refund, which must exist (one just inserted). */
export async function selectRefundOrThrow(em: Db, refundId: number): Promise<RefundRow> {
  return refundQuery(em).where('r.id', '=', refundId).executeTakeFirstOrThrow();
}

export interface RefundListFilter {
  page: number;
  perPage: number;
  status?: RefundStatus;
  /** Service or gateway reference of the refunded transaction. */
  trxId?: string;
  transactionId?: number;
  /** Inclusive calendar dates (UTC), `YYYY-MM-DD`. */
  from?: string;
  to?: string;
}

/**
 * A page of the refunds matching the filters, newest first, of one brand or (no
 * `brandId`) of all, and how many match in all.
 */
export async function refundPage(
  em: Db,
  f: RefundListFilter & { brandId?: number; brandIds?: number[] | null; mode?: Mode },
): Promise<{ rows: RefundRow[]; total: number }> {
  const matching = refundQuery(em)
    .$if(f.brandId !== undefined, (q) => q.where('r.brand_id', '=', f.brandId!))
    .$if(f.brandIds != null, (q) => q.where('r.brand_id', 'in', scopeParam(f.brandIds!)))
    .$if(f.mode !== undefined, (q) => q.where('r.mode', '=', f.mode!))
    .$if(f.status !== undefined, (q) => q.where('r.status', '=', f.status!))
    .$if(f.trxId !== undefined, (q) =>
      q.where((eb) => eb.or([eb('t.trx_id', '=', f.trxId!), eb(sql<string>`upper(t.gateway_trx_id)`, '=', sql<string>`upper(${f.trxId!})`)])),
    )
    .$if(f.transactionId !== undefined, (q) => q.where('r.transaction_id', '=', f.transactionId!))
    .$if(f.from !== undefined, (q) => q.where('r.created_at', '>=', utcDayStart(f.from!)))
    // Inclusive: everything before the start of the next UTC day.
    .$if(f.to !== undefined, (q) => q.where('r.created_at', '<', utcDayAfter(f.to!)));
  const count = await matching.clearSelect().select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
  const rows = await matching
    .orderBy('r.created_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(f.perPage)
    .offset((f.page - 1) * f.perPage)
    .execute();
  return { rows, total: Number(count.total) };
}

/** Locks the transaction row until the transaction ends (serialises the refunds of one transaction). */
export async function lockTransactionForRefund(tx: Db, transactionId: number): Promise<{ status: string; amount: string; currency: string }> {
  return tx.selectFrom('transactions').select(['status', 'amount', 'currency']).where('id', '=', transactionId).forUpdate().executeTakeFirstOrThrow();
}

/** The sum of the transaction's refunds that are not failed (pending ones hold their amount), as a decimal string. */
export async function refundedAmount(tx: Db, transactionId: number): Promise<string> {
  const sum = await tx
    .selectFrom('refunds')
    .select(sql<string>`COALESCE(sum(amount), 0)::numeric(14,2)::text`.as('refunded'))
    .where('transaction_id', '=', transactionId)
    .where('status', '<>', 'failed')
    .executeTakeFirstOrThrow();
  return sum.refunded;
}

/** Inserts a pending refund; mode is not given: a trigger copies the transaction's. */
export async function insertRefund(
  tx: Db,
  row: { uuid: string; brandId: number; transactionId: number; amount: string; currency: string; reason: string | null },
): Promise<number> {
  const inserted = await tx
    .insertInto('refunds')
    .values({ uuid: row.uuid, brand_id: row.brandId, transaction_id: row.transactionId, amount: row.amount, currency: row.currency, reason: row.reason })
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

/**
 * pending -> `to`, now; the completion's reference and note are kept only on
 * completion. False when the refund is not pending (or does not exist).
 */
export async function finishPendingRefund(
  tx: Db,
  refundId: number,
  to: 'completed' | 'failed',
  values: { failureReason: string | null; reference: string | null; note: string | null },
): Promise<boolean> {
  const updated = await tx
    .updateTable('refunds')
    .set({
      status: to,
      processed_at: sql<Date>`now()`,
      failure_reason: values.failureReason,
      ...(to === 'completed' ? { completion_reference: values.reference, completion_note: values.note } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', refundId)
    .where('status', '=', 'pending')
    .returning('id')
    .execute();
  return updated.length > 0;
}

/** Locks the refund row until the transaction ends; false when there is no such refund. */
export async function lockRefund(tx: Db, refundId: number): Promise<boolean> {
  return (await tx.selectFrom('refunds').select('id').where('id', '=', refundId).forUpdate().executeTakeFirst()) !== undefined;
}
