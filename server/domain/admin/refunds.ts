import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { completeRefund, failRefund, getRefund, toRefundResource, type RefundListFilter, type RefundResource } from '../refunds/service.ts';

export type AdminRefund = RefundResource & { brand_id: number };

export async function getAdminRefund(em: EntityManager, refundId: number): Promise<AdminRefund> {
  const { brandId, ...refund } = await getRefund(em, refundId);
  return { ...refund, brand_id: brandId };
}

/** The refunds service's row shape (see toRefundResource), with the brand. */
const SELECT = `
  SELECT r.id, r.uuid, r.brand_id, r.transaction_id, t.trx_id, t.gateway_trx_id, r.amount::text AS amount, r.currency, r.reason,
         r.status, r.failure_reason, r.processed_at, r.created_at
    FROM refunds r JOIN transactions t ON t.id = r.transaction_id`;

/**
 * Refunds of every brand, or of one, newest first, with the merchant list's
 * filters (same meaning, same inclusive UTC dates).
 */
export async function listAdminRefunds(em: EntityManager, f: RefundListFilter & { brandId?: number }): Promise<{ items: AdminRefund[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.brandId !== undefined) {
    where.push('r.brand_id = ?');
    params.push(f.brandId);
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
  const [count] = await em.execute<Array<{ n: string }>>(`SELECT count(*) AS n FROM refunds r JOIN transactions t ON t.id = r.transaction_id ${clause}`, params);
  const rows = await em.execute<Array<Parameters<typeof toRefundResource>[0]>>(`${SELECT} ${clause} ORDER BY r.created_at DESC, r.id DESC LIMIT ? OFFSET ?`, [
    ...params,
    f.perPage,
    (f.page - 1) * f.perPage,
  ]);
  return { items: rows.map((r) => ({ ...toRefundResource(r), brand_id: Number(r.brand_id) })), total: Number(count!.n) };
}

const refundState = (r: RefundResource) => ({ status: r.status, amount: r.amount, currency: r.currency, transaction_id: r.transaction_id });

async function settle(em: EntityManager, who: AuditActor, refundId: number, to: 'completed' | 'failed', reason: string | null): Promise<AdminRefund> {
  return withAudit(em, who, async (tx) => {
    const locked = await tx.execute('SELECT id FROM refunds WHERE id = ? FOR UPDATE', [refundId]);
    if (locked.length === 0) throw new AppError('REFUND_NOT_FOUND');
    const before = await getAdminRefund(tx, refundId);
    const { refund, changed } = to === 'completed' ? await completeRefund(tx, refundId) : await failRefund(tx, refundId, { reason: reason ?? 'failed' });
    const after = { ...refund, brand_id: before.brand_id };
    return {
      result: after,
      audit: changed
        ? { action: to === 'completed' ? 'refund.complete' : 'refund.fail', targetType: 'refund', targetId: refundId, brandId: before.brand_id, before: refundState(before), after: refundState(after) }
        : null,
    };
  });
}

/** pending -> completed (`refund.completed` to the merchant); a repeat changes nothing and is not recorded again. */
export function completeRefundAudited(em: EntityManager, who: AuditActor, refundId: number): Promise<AdminRefund> {
  return settle(em, who, refundId, 'completed', null);
}

/** pending -> failed (`refund.failed` to the merchant); a repeat changes nothing and is not recorded again. */
export function failRefundAudited(em: EntityManager, who: AuditActor, refundId: number, reason: string): Promise<AdminRefund> {
  return settle(em, who, refundId, 'failed', reason);
}
