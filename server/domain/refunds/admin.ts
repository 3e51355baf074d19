import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { completeRefund, failRefund, getRefund, searchRefunds, type RefundListFilter, type RefundResource } from './service.ts';

export type AdminRefund = RefundResource & { brand_id: number; mode: Mode; livemode: boolean };

export async function getAdminRefund(em: Db, refundId: number): Promise<AdminRefund> {
  const { brandId, mode, ...refund } = await getRefund(em, refundId);
  return { ...refund, brand_id: brandId, mode, livemode: mode === 'live' };
}

/**
 * Refunds of every brand, or of one, newest first, with the merchant list's
 * filters (same meaning, same inclusive UTC dates).
 */
export async function listAdminRefunds(em: Db, f: RefundListFilter & { brandId?: number; brandIds?: number[] | null; mode?: Mode }): Promise<{ items: AdminRefund[]; total: number }> {
  const { items, total } = await searchRefunds(em, f);
  return { items: items.map(({ brandId, mode, ...refund }) => ({ ...refund, brand_id: brandId, mode, livemode: mode === 'live' })), total };
}

const refundState = (r: RefundResource) => ({ status: r.status, amount: r.amount, currency: r.currency, transaction_id: r.transaction_id });

async function settle(em: Db, who: AuditActor, refundId: number, to: 'completed' | 'failed', reason: string | null): Promise<AdminRefund> {
  return withAudit(em, who, async (tx) => {
    const locked = await tx.selectFrom('refunds').select('id').where('id', '=', refundId).forUpdate().executeTakeFirst();
    if (!locked) throw new AppError('REFUND_NOT_FOUND');
    const before = await getAdminRefund(tx, refundId);
    const { refund, changed } = to === 'completed' ? await completeRefund(tx, refundId) : await failRefund(tx, refundId, { reason: reason ?? 'failed' });
    const after = { ...refund, brand_id: before.brand_id, mode: before.mode, livemode: before.livemode };
    return {
      result: after,
      audit: changed
        ? { action: to === 'completed' ? 'refund.complete' : 'refund.fail', targetType: 'refund', targetId: refundId, brandId: before.brand_id, before: refundState(before), after: refundState(after) }
        : null,
    };
  });
}

/** pending -> completed (`refund.completed` to the merchant); a repeat changes nothing and is not recorded again. */
export function completeRefundAudited(em: Db, who: AuditActor, refundId: number): Promise<AdminRefund> {
  return settle(em, who, refundId, 'completed', null);
}

/** pending -> failed (`refund.failed` to the merchant); a repeat changes nothing and is not recorded again. */
export function failRefundAudited(em: Db, who: AuditActor, refundId: number, reason: string): Promise<AdminRefund> {
  return settle(em, who, refundId, 'failed', reason);
}
