import { randomUUID } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { GatewayType, Mode } from '../../../contract/vocabulary.ts';
import { compareMoney, subMoney } from '../money/decimal.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import type { RefundStatus } from './entities.ts';
import { transaction, type Db } from '../db.ts';
import { handRefundToGateway } from '../sandbox/refunds.ts';
import {
  finishPendingRefund, insertRefund, latestRefundOf, lockTransactionForRefund, paymentTransaction, refundedAmount, refundPage, selectRefund, selectRefundOrThrow,
  transactionsByGatewayTrxId, transactionsByTrxId, type RefundListFilter, type RefundRow, type TransactionRef,
} from './queries.ts';

export type { RefundListFilter } from './queries.ts';

/** A refund in the API's shape (also the data of `refund.*` webhook events). */
export interface RefundResource {
  id: number;
  uuid: string;
  transaction_id: number;
  trx_id: string;
  gateway_trx_id: string | null;
  amount: string;
  currency: string;
  reason: string | null;
  status: RefundStatus;
  failure_reason: string | null;
  processed_at: string | null;
  created_at: string;
}

/** What only the console sees of a refund: who pays it out and what the operator recorded on completing it. */
export interface RefundAdminFields {
  brandId: number;
  mode: Mode;
  gateway_type: GatewayType;
  completion_reference: string | null;
  completion_note: string | null;
}

const adminFields = (r: RefundRow): RefundAdminFields => ({
  brandId: r.brand_id,
  mode: r.mode,
  gateway_type: r.gateway_type,
  completion_reference: r.completion_reference,
  completion_note: r.completion_note,
});

function toRefundResource(r: RefundRow): RefundResource {
  return {
    id: r.id,
    uuid: r.uuid,
    transaction_id: r.transaction_id,
    trx_id: r.trx_id,
    gateway_trx_id: r.gateway_trx_id,
    amount: r.amount,
    currency: r.currency,
    reason: r.reason,
    status: r.status,
    failure_reason: r.failure_reason,
    processed_at: r.processed_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
  };
}

/**
 * The brand's transactions a reference names: the service reference (`trx_id`)
 * when it matches, else every transaction whose gateway reference matches
 * (case-insensitively; two gateways may use the same id).
 */
async function findTransactions(em: Db, brandId: number, mode: Mode, reference: string): Promise<TransactionRef[]> {
  const ref = reference.trim();
  if (ref === '' || ref.length > 100) return [];
  const byTrxId = await transactionsByTrxId(em, brandId, mode, ref);
  if (byTrxId.length > 0) return byTrxId;
  return transactionsByGatewayTrxId(em, brandId, mode, ref);
}

/**
 * The transaction a payment id names for a refund: its completed one when it has
 * it (at most one per payment, a database constraint), else its latest, which
 * createRefund then refuses as not refundable. An unknown payment, another
 * brand's or mode's, or one without any transaction: none.
 */
async function findPaymentTransaction(em: Db, brandId: number, mode: Mode, paymentId: string): Promise<TransactionRef[]> {
  const r = await paymentTransaction(em, brandId, mode, paymentId.toLowerCase());
  if (!r) return [];
  if (r.id === null) throw new AppError('TRANSACTION_NOT_REFUNDABLE', 'The payment has not been paid: nothing to refund', { field: 'payment_id' });
  return [{ id: r.id, status: r.status!, amount: r.amount!, currency: r.currency! }];
}

/**
 * The latest refund of the transaction a reference names (service or gateway
 * reference). Unknown transaction (or another brand's): PAYMENT_NOT_FOUND; known
 * without refunds: REFUND_NOT_FOUND.
 */
export async function getLatestRefund(em: Db, brandId: number, mode: Mode, reference: string): Promise<RefundResource> {
  const txs = await findTransactions(em, brandId, mode, reference);
  if (txs.length === 0) throw new AppError('PAYMENT_NOT_FOUND');
  const row = await latestRefundOf(em, txs.map((t) => t.id));
  if (!row) throw new AppError('REFUND_NOT_FOUND');
  return toRefundResource(row);
}

export async function getRefund(em: Db, refundId: number): Promise<RefundResource & RefundAdminFields> {
  const row = await selectRefund(em, refundId);
  if (!row) throw new AppError('REFUND_NOT_FOUND');
  return { ...toRefundResource(row), ...adminFields(row) };
}

/**
 * Refunds matching the filters, newest first, of one brand or (no `brandId`,
 * admin) of all; `total` counts every match. The merchant list and the admin
 * list share this so their filters can never mean different things.
 */
export async function searchRefunds(
  em: Db,
  f: RefundListFilter & { brandId?: number; brandIds?: number[] | null; mode?: Mode },
): Promise<{ items: Array<RefundResource & RefundAdminFields>; total: number }> {
  const { rows, total } = await refundPage(em, f);
  return { items: rows.map((r) => ({ ...toRefundResource(r), ...adminFields(r) })), total };
}

/** The brand's refunds, newest first; `total` counts every refund matching the filters. */
export async function listRefunds(em: Db, brandId: number, mode: Mode, f: RefundListFilter): Promise<{ items: RefundResource[]; total: number }> {
  const { items, total } = await searchRefunds(em, { ...f, brandId, mode });
  return { items: items.map((r) => merchantRefund(r)), total };
}

/**
 * Creates a pending refund of a completed transaction, named by its reference
 * (`trxId`) or by its payment's public id (`paymentId`). The transaction row is
 * locked FOR UPDATE while the non-failed refunds are summed and the new one is
 * inserted, so concurrent requests are serialised and the sum never exceeds the
 * transaction amount. Errors (on the field that named the transaction): PAYMENT_NOT_FOUND (unknown reference or payment),
 * TRANSACTION_NOT_REFUNDABLE (not completed), REFUND_EXCEEDS_AVAILABLE.
 */
export async function createRefund(
  em: Db,
  brandId: number,
  mode: Mode,
  input: ({ trxId: string } | { paymentId: string }) & { amount: string; reason?: string | null },
): Promise<RefundResource> {
  const field = 'paymentId' in input ? 'payment_id' : 'trx_id';
  return transaction(em, async (tx) => {
    const txs = 'paymentId' in input ? await findPaymentTransaction(tx, brandId, mode, input.paymentId) : await findTransactions(tx, brandId, mode, input.trxId);
    if (txs.length === 0) throw new AppError('PAYMENT_NOT_FOUND', undefined, { field });
    if (txs.length > 1) {
      throw new AppError('VALIDATION_ERROR', 'Several transactions carry this gateway reference; use the service trx_id', { field: 'trx_id' });
    }
    const locked = await lockTransactionForRefund(tx, txs[0]!.id);
    if (locked.status !== 'completed') throw new AppError('TRANSACTION_NOT_REFUNDABLE', undefined, { field });
    const available = subMoney(locked.amount, await refundedAmount(tx, txs[0]!.id));
    if (compareMoney(input.amount, available) > 0) {
      throw new AppError('REFUND_EXCEEDS_AVAILABLE', `Refund amount exceeds the refundable amount (${available} ${locked.currency} left)`, {
        field: 'amount',
      });
    }
    // mode is not given: a trigger copies the transaction's.
    const refundId = await insertRefund(tx, { uuid: randomUUID(), brandId, transactionId: txs[0]!.id, amount: input.amount, currency: locked.currency, reason: input.reason?.trim() || null });
    // The gateway's seam: the sandbox completes its refunds from a job enqueued in this transaction.
    await handRefundToGateway(tx, refundId, txs[0]!.id);
    return toRefundResource(await selectRefundOrThrow(tx, refundId));
  });
}

/** The merchant's shape of a refund (also a `refund.*` webhook's data): none of the console's fields. */
function merchantRefund(r: RefundResource & RefundAdminFields): RefundResource {
  const { brandId: _b, mode: _m, gateway_type: _g, completion_reference: _r, completion_note: _n, ...refund } = r;
  return refund;
}

export interface RefundCompletion {
  /** The wallet's transaction id of the money sent back (an operator must give it for a manual gateway: refunds/admin.ts). */
  reference?: string | null;
  note?: string | null;
}

async function finishRefund(
  em: Db,
  refundId: number,
  to: 'completed' | 'failed',
  opts: { reason: string | null; completion?: RefundCompletion },
): Promise<{ refund: RefundResource & RefundAdminFields; changed: boolean }> {
  return transaction(em, async (tx) => {
    const reference = opts.completion?.reference?.trim() || null;
    const note = opts.completion?.note?.trim() || null;
    const changed = await finishPendingRefund(tx, refundId, to, { failureReason: opts.reason, reference, note });
    const full = await getRefund(tx, refundId);
    if (!changed) {
      if (full.status === to) return { refund: full, changed: false };
      throw new AppError('INVALID_STATE', `Refund is already ${full.status}`);
    }
    const data = merchantRefund(full);
    await recordEvent(tx, { brandId: full.brandId, mode: full.mode, event: to === 'completed' ? 'refund.completed' : 'refund.failed', data: { ...data }, transactionId: data.transaction_id });
    return { refund: full, changed: true };
  });
}

/**
 * pending -> completed with `refund.completed`, keeping the payout's reference and note when given;
 * a repeat changes nothing (the first ones stay); a failed one is INVALID_STATE.
 */
export function completeRefund(em: Db, refundId: number, completion: RefundCompletion = {}): Promise<{ refund: RefundResource & RefundAdminFields; changed: boolean }> {
  return finishRefund(em, refundId, 'completed', { reason: null, completion });
}

/** pending -> failed with `refund.failed`; the amount becomes refundable again. */
export function failRefund(em: Db, refundId: number, opts: { reason: string }): Promise<{ refund: RefundResource & RefundAdminFields; changed: boolean }> {
  return finishRefund(em, refundId, 'failed', { reason: opts.reason.trim().slice(0, 500) || 'failed' });
}
