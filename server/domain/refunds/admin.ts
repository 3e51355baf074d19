import { AppError } from '../../../contract/common/errors.ts';
import type { GatewayType, Mode } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import {
  completeRefund, failRefund, getRefund, searchRefunds, type RefundAdminFields, type RefundCompletion, type RefundListFilter, type RefundResource,
} from './service.ts';
import { lockRefund } from './queries.ts';

export type AdminRefund = RefundResource & {
  brand_id: number;
  mode: Mode;
  livemode: boolean;
  gateway_type: GatewayType;
  completion_reference: string | null;
  completion_note: string | null;
};

const toAdmin = ({ brandId, mode, ...refund }: RefundResource & RefundAdminFields): AdminRefund => ({ ...refund, brand_id: brandId, mode, livemode: mode === 'live' });

export async function getAdminRefund(em: Db, refundId: number): Promise<AdminRefund> {
  return toAdmin(await getRefund(em, refundId));
}

/**
 * Refunds of every brand, or of one, newest first, with the merchant list's
 * filters (same meaning, same inclusive UTC dates).
 */
export async function listAdminRefunds(em: Db, f: RefundListFilter & { brandId?: number; brandIds?: number[] | null; mode?: Mode }): Promise<{ items: AdminRefund[]; total: number }> {
  const { items, total } = await searchRefunds(em, f);
  return { items: items.map(toAdmin), total };
}

const refundState = (r: AdminRefund) => ({
  status: r.status,
  amount: r.amount,
  currency: r.currency,
  transaction_id: r.transaction_id,
  ...(r.completion_reference !== null ? { completion_reference: r.completion_reference } : {}),
  ...(r.completion_note !== null ? { completion_note: r.completion_note } : {}),
});

/**
 * A person paid a manual gateway's refund out of a wallet: without the wallet's
 * reference nobody could later trace or prove that payout. A repeat of a done
 * completion needs none (it changes nothing).
 */
function checkCompletion(refund: AdminRefund, completion: RefundCompletion): void {
  const reference = completion.reference?.trim() ?? '';
  if (refund.status === 'pending' && refund.gateway_type === 'manual' && reference === '') {
    throw new AppError('VALIDATION_ERROR', 'Give the wallet reference (transaction id) of the money sent back', { field: 'reference' });
  }
  if (reference.length > 100) throw new AppError('VALIDATION_ERROR', 'At most 100 characters', { field: 'reference' });
  if ((completion.note?.trim() ?? '').length > 500) throw new AppError('VALIDATION_ERROR', 'At most 500 characters', { field: 'note' });
}

async function settle(em: Db, who: AuditActor, refundId: number, to: 'completed' | 'failed', input: { reason?: string; completion?: RefundCompletion }): Promise<AdminRefund> {
  return withAudit(em, who, async (tx) => {
    if (!(await lockRefund(tx, refundId))) throw new AppError('REFUND_NOT_FOUND');
    const before = await getAdminRefund(tx, refundId);
    if (to === 'completed') checkCompletion(before, input.completion ?? {});
    const { refund, changed } = to === 'completed' ? await completeRefund(tx, refundId, input.completion) : await failRefund(tx, refundId, { reason: input.reason ?? 'failed' });
    const after = toAdmin(refund);
    return {
      result: after,
      audit: changed
        ? { action: to === 'completed' ? 'refund.complete' : 'refund.fail', targetType: 'refund', targetId: refundId, brandId: before.brand_id, before: refundState(before), after: refundState(after) }
        : null,
    };
  });
}

/**
 * pending -> completed (`refund.completed` to the merchant), keeping the wallet
 * reference of the payout and the note on the refund and in the audit entry; a
 * repeat changes nothing and is not recorded again.
 */
export function completeRefundAudited(em: Db, who: AuditActor, refundId: number, completion: RefundCompletion = {}): Promise<AdminRefund> {
  return settle(em, who, refundId, 'completed', { completion });
}

/** pending -> failed (`refund.failed` to the merchant); a repeat changes nothing and is not recorded again. */
export function failRefundAudited(em: Db, who: AuditActor, refundId: number, reason: string): Promise<AdminRefund> {
  return settle(em, who, refundId, 'failed', { reason });
}
