import { enqueueInTransaction } from '../../infra/jobs/workers.ts';
import { type Db } from '../db.ts';
import { isSandboxDriven } from './gateway.ts';
import { selectTransactionGatewayType } from './queries.ts';

export const COMPLETE_SANDBOX_REFUND_QUEUE = 'complete-sandbox-refund';

/**
 * The refunds service's seam: called inside the transaction that creates a
 * refund. A refund of a sandbox-driven transaction is handed to the sandbox,
 * which completes it from a background job (README.md, Merchant API: refunds);
 * manual-gateway refunds wait for an admin.
 */
export async function handRefundToGateway(tx: Db, refundId: number, transactionId: number): Promise<void> {
  const gateway = await selectTransactionGatewayType(tx, transactionId);
  if (gateway && isSandboxDriven(gateway)) await enqueueInTransaction(tx, COMPLETE_SANDBOX_REFUND_QUEUE, { refundId });
}

