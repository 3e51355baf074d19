import { randomUUID } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { compareMoney, subMoney } from '../money/decimal.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import type { RefundStatus } from './entities.ts';
import { pgDate } from '../../infra/database/pg-date.ts';
import { handRefundToGateway } from '../sandbox/refunds.ts';
import { scopeParam } from '../brands/scope.ts';

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

interface RefundRow {
  id: string;
  uuid: string;
  brand_id: string;
  mode: Mode;
  transaction_id: string;
  trx_id: string;
  gateway_trx_id: string | null;
  amount: string;
  currency: string;
  reason: string | null;
  status: RefundStatus;
  failure_reason: string | null;
  processed_at: string | Date | null;
  created_at: string | Date;
}

const SELECT = `
  SELECT r.id, r.uuid, r.brand_id, r.mode, r.transaction_id, t.trx_id, t.gateway_trx_id, r.amount::text AS amount, r.currency, r.reason,
         r.status, r.failure_reason, r.processed_at, r.created_at
    FROM refunds r JOIN transactions t ON t.id = r.transaction_id`;

function toRefundResource(r: RefundRow): RefundResource {
  return {
    id: Number(r.id),
    uuid: r.uuid,
    transaction_id: Number(r.transaction_id),
    trx_id: r.trx_id,
    gateway_trx_id: r.gateway_trx_id,
    amount: r.amount,
    currency: r.currency,
    reason: r.reason,
    status: r.status,
    failure_reason: r.failure_reason,
    processed_at: r.processed_at ? pgDate(r.processed_at).toISOString() : null,
    created_at: pgDate(r.created_at).toISOString(),
  };
}

interface TransactionRef {
  id: number;
  status: string;
  amount: string;
  currency: string;
}

/**
 * The brand's transactions a reference names: the service reference (`trx_id`)
 * when it matches, else every transaction whose gateway reference matches
 * (case-insensitively; two gateways may use the same id).
 */
async function findTransactions(em: EntityManager, brandId: number, mode: Mode, reference: string): Promise<TransactionRef[]> {
  const ref = reference.trim();
  if (ref === '' || ref.length > 100) return [];
  const cols = 'id, status, amount::text AS amount, currency';
  let rows = await em.execute<Array<{ id: string; status: string; amount: string; currency: string }>>(
    `SELECT ${cols} FROM transactions WHERE brand_id = ? AND mode = ? AND trx_id = ?`,
    [brandId, mode, ref],
  );
  if (rows.length === 0) {
    rows = await em.execute(
      `SELECT ${cols} FROM transactions WHERE brand_id = ? AND mode = ? AND upper(gateway_trx_id) = upper(?) AND gateway_trx_id IS NOT NULL ORDER BY id`,
      [brandId, mode, ref],
    );
  }
  return rows.map((r) => ({ id: Number(r.id), status: r.status, amount: r.amount, currency: r.currency }));
}

/**
 * The transaction a payment id names for a refund: its completed one when it has
 * it (at most one per payment, a database constraint), else its latest, which
 * createRefund then refuses as not refundable. An unknown payment, another
 * brand's or mode's, or one without any transaction: none.
 */
async function findPaymentTransaction(em: EntityManager, brandId: number, mode: Mode, paymentId: string): Promise<TransactionRef[]> {
  const rows = await em.execute<Array<{ id: string; status: string; amount: string; currency: string; intent_id: string }>>(
    `SELECT i.id AS intent_id, t.id, t.status, t.amount::text AS amount, t.currency
       FROM payment_intents i LEFT JOIN transactions t ON t.intent_id = i.id
      WHERE i.uuid = ? AND i.brand_id = ? AND i.mode = ?
      ORDER BY (t.status = 'completed') DESC NULLS LAST, t.created_at DESC, t.id DESC LIMIT 1`,
    [paymentId.toLowerCase(), brandId, mode],
  );
  const r = rows[0];
  if (!r) return [];
  if (r.id === null) throw new AppError('TRANSACTION_NOT_REFUNDABLE', 'The payment has not been paid: nothing to refund', { field: 'payment_id' });
  return [{ id: Number(r.id), status: r.status, amount: r.amount, currency: r.currency }];
}

/**
 * The latest refund of the transaction a reference names (service or gateway
 * reference). Unknown transaction (or another brand's): PAYMENT_NOT_FOUND; known
 * without refunds: REFUND_NOT_FOUND.
 */
export async function getLatestRefund(em: EntityManager, brandId: number, mode: Mode, reference: string): Promise<RefundResource> {
  const txs = await findTransactions(em, brandId, mode, reference);
  if (txs.length === 0) throw new AppError('PAYMENT_NOT_FOUND');
  const rows = await em.execute<RefundRow[]>(`${SELECT} WHERE r.transaction_id IN (?) ORDER BY r.created_at DESC, r.id DESC LIMIT 1`, [
    txs.map((t) => t.id),
  ]);
  if (!rows[0]) throw new AppError('REFUND_NOT_FOUND');
  return toRefundResource(rows[0]);
}

export async function getRefund(em: EntityManager, refundId: number): Promise<RefundResource & { brandId: number; mode: Mode }> {
  const rows = await em.execute<RefundRow[]>(`${SELECT} WHERE r.id = ?`, [refundId]);
  if (!rows[0]) throw new AppError('REFUND_NOT_FOUND');
  return { ...toRefundResource(rows[0]), brandId: Number(rows[0].brand_id), mode: rows[0].mode };
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
 * Refunds matching the filters, newest first, of one brand or (no `brandId`,
 * admin) of all; `total` counts every match. The merchant list and the admin
 * list share this so their filters can never mean different things.
 */
export async function searchRefunds(
  em: EntityManager,
  f: RefundListFilter & { brandId?: number; brandIds?: number[] | null; mode?: Mode },
): Promise<{ items: Array<RefundResource & { brandId: number; mode: Mode }>; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.brandId !== undefined) {
    where.push('r.brand_id = ?');
    params.push(f.brandId);
  }
  if (f.brandIds) {
    where.push('r.brand_id IN (?)');
    params.push(scopeParam(f.brandIds));
  }
  if (f.mode !== undefined) {
    where.push('r.mode = ?');
    params.push(f.mode);
  }
  if (f.status) {
    where.push('r.status = ?');
    params.push(f.status);
  }
  if (f.trxId !== undefined) {
    where.push('(t.trx_id = ? OR upper(t.gateway_trx_id) = upper(?))');
    params.push(f.trxId, f.trxId);
  }
  if (f.transactionId !== undefined) {
    where.push('r.transaction_id = ?');
    params.push(f.transactionId);
  }
  if (f.from) {
    where.push("r.created_at >= (?::date)::timestamp AT TIME ZONE 'UTC'");
    params.push(f.from);
  }
  if (f.to) {
    // Inclusive: everything before the start of the next UTC day.
    where.push("r.created_at < ((?::date + 1)::timestamp AT TIME ZONE 'UTC')");
    params.push(f.to);
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const [count] = await em.execute<Array<{ total: string }>>(
    `SELECT count(*) AS total FROM refunds r JOIN transactions t ON t.id = r.transaction_id ${clause}`,
    params,
  );
  const rows = await em.execute<RefundRow[]>(`${SELECT} ${clause} ORDER BY r.created_at DESC, r.id DESC LIMIT ? OFFSET ?`, [
    ...params,
    f.perPage,
    (f.page - 1) * f.perPage,
  ]);
  return { items: rows.map((r) => ({ ...toRefundResource(r), brandId: Number(r.brand_id), mode: r.mode })), total: Number(count!.total) };
}

/** The brand's refunds, newest first; `total` counts every refund matching the filters. */
export async function listRefunds(em: EntityManager, brandId: number, mode: Mode, f: RefundListFilter): Promise<{ items: RefundResource[]; total: number }> {
  const { items, total } = await searchRefunds(em, { ...f, brandId, mode });
  return { items: items.map(({ brandId: _brand, mode: _mode, ...refund }) => refund), total };
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
  em: EntityManager,
  brandId: number,
  mode: Mode,
  input: ({ trxId: string } | { paymentId: string }) & { amount: string; reason?: string | null },
): Promise<RefundResource> {
  const field = 'paymentId' in input ? 'payment_id' : 'trx_id';
  return em.transactional(async (tx) => {
    const txs = 'paymentId' in input ? await findPaymentTransaction(tx, brandId, mode, input.paymentId) : await findTransactions(tx, brandId, mode, input.trxId);
    if (txs.length === 0) throw new AppError('PAYMENT_NOT_FOUND', undefined, { field });
    if (txs.length > 1) {
      throw new AppError('VALIDATION_ERROR', 'Several transactions carry this gateway reference; use the service trx_id', { field: 'trx_id' });
    }
    const [locked] = await tx.execute<Array<{ status: string; amount: string; currency: string }>>(
      'SELECT status, amount::text AS amount, currency FROM transactions WHERE id = ? FOR UPDATE',
      [txs[0]!.id],
    );
    if (locked!.status !== 'completed') throw new AppError('TRANSACTION_NOT_REFUNDABLE', undefined, { field });
    const [sum] = await tx.execute<Array<{ refunded: string }>>(
      `SELECT COALESCE(sum(amount), 0)::numeric(14,2)::text AS refunded FROM refunds WHERE transaction_id = ? AND status <> 'failed'`,
      [txs[0]!.id],
    );
    const available = subMoney(locked!.amount, sum!.refunded);
    if (compareMoney(input.amount, available) > 0) {
      throw new AppError('REFUND_EXCEEDS_AVAILABLE', `Refund amount exceeds the refundable amount (${available} ${locked!.currency} left)`, {
        field: 'amount',
      });
    }
    const [row] = await tx.execute<Array<{ id: string }>>(
      `INSERT INTO refunds (uuid, brand_id, transaction_id, amount, currency, reason) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
      [randomUUID(), brandId, txs[0]!.id, input.amount, locked!.currency, input.reason?.trim() || null],
    );
    // The gateway's seam: the sandbox completes its refunds from a job enqueued in this transaction.
    await handRefundToGateway(tx, Number(row!.id), txs[0]!.id);
    const [created] = await tx.execute<RefundRow[]>(`${SELECT} WHERE r.id = ?`, [row!.id]);
    return toRefundResource(created!);
  });
}

async function finishRefund(
  em: EntityManager,
  refundId: number,
  to: 'completed' | 'failed',
  reason: string | null,
): Promise<{ refund: RefundResource; changed: boolean }> {
  return em.transactional(async (tx) => {
    const updated = await tx.execute<Array<{ id: string }>>(
      `UPDATE refunds SET status = ?, processed_at = now(), failure_reason = ?, updated_at = now()
        WHERE id = ? AND status = 'pending' RETURNING id`,
      [to, reason, refundId],
    );
    const { brandId, mode, ...data } = await getRefund(tx, refundId);
    if (updated.length === 0) {
      if (data.status === to) return { refund: data, changed: false };
      throw new AppError('INVALID_STATE', `Refund is already ${data.status}`);
    }
    await recordEvent(tx, { brandId, mode, event: to === 'completed' ? 'refund.completed' : 'refund.failed', data: { ...data }, transactionId: data.transaction_id });
    return { refund: data, changed: true };
  });
}

/** pending -> completed with `refund.completed`; a repeat changes nothing; a failed one is INVALID_STATE. */
export function completeRefund(em: EntityManager, refundId: number): Promise<{ refund: RefundResource; changed: boolean }> {
  return finishRefund(em, refundId, 'completed', null);
}

/** pending -> failed with `refund.failed`; the amount becomes refundable again. */
export function failRefund(em: EntityManager, refundId: number, opts: { reason: string }): Promise<{ refund: RefundResource; changed: boolean }> {
  return finishRefund(em, refundId, 'failed', opts.reason.trim().slice(0, 500) || 'failed');
}
