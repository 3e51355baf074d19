import type { EntityManager } from '../../infra/database/orm.ts';
import { enqueueInTransaction } from '../../infra/jobs/workers.ts';
import { isSandboxDriven } from './gateway.ts';

export const COMPLETE_SANDBOX_REFUND_QUEUE = 'complete-sandbox-refund';

/**
 * The refunds service's seam: called inside the transaction that creates a
 * refund. A refund of a sandbox-driven transaction is handed to the sandbox,
 * which completes it from a background job (README.md, Merchant API: refunds);
 * manual-gateway refunds wait for an admin.
 */
export async function handRefundToGateway(tx: EntityManager, refundId: number, transactionId: number): Promise<void> {
  const rows = await tx.execute<Array<{ type: 'manual' | 'automatic' }>>(
    'SELECT g.type FROM transactions t JOIN gateways g ON g.id = t.gateway_id WHERE t.id = ?',
    [transactionId],
  );
  if (rows[0] && isSandboxDriven(rows[0])) await enqueueInTransaction(tx, COMPLETE_SANDBOX_REFUND_QUEUE, { refundId });
}

