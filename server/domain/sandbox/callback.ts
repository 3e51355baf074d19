import { AppError } from '../../../contract/common/errors.ts';
import type { SandboxCallback } from '../../../contract/checkout/sandbox.ts';
import { compareMoney } from '../money/decimal.ts';
import type { TransactionStatus } from '../payments/entities.ts';
import { completeTransaction, failTransaction, getTransactionByTrxId } from '../payments/transactions.ts';
import { isSandboxDriven } from './gateway.ts';
import type { Db } from '../db.ts';

export interface CallbackResult {
  trxId: string;
  status: TransactionStatus;
  changed: boolean;
}

/**
 * The service's side of a (signature-checked) sandbox callback: an approval
 * completes the transaction, a decline fails it, through the payment state
 * machine (which records `payment.completed` / `payment.failed` in the same
 * database transaction). A repeat changes nothing; a callback that contradicts
 * what is recorded, or reports another amount, is INVALID_STATE and changes nothing.
 */
export async function applySandboxCallback(em: Db, cb: SandboxCallback): Promise<CallbackResult> {
  let t;
  try {
    t = await getTransactionByTrxId(em, cb.trx_id);
  } catch (err) {
    if (err instanceof AppError && err.code === 'TRANSACTION_NOT_FOUND') throw new AppError('TRANSACTION_NOT_FOUND', undefined, { field: 'trx_id' });
    throw err;
  }
  // The sandbox only ever collects for the gateways it drives; anything else is not its transaction.
  if (!isSandboxDriven({ type: t.gatewayType })) throw new AppError('TRANSACTION_NOT_FOUND', undefined, { field: 'trx_id' });
  if (cb.currency !== t.currency || compareMoney(cb.amount, t.amount) !== 0) {
    throw new AppError('INVALID_STATE', `Callback reports ${cb.amount} ${cb.currency}; the transaction is ${t.amount} ${t.currency}`, { field: 'amount' });
  }
  const change =
    cb.outcome === 'approved'
      ? await completeTransaction(em, t.id, { source: 'gateway_callback', gatewayTrxId: cb.gateway_trx_id })
      : await failTransaction(em, t.id, { reason: cb.reason ? `Declined by the gateway: ${cb.reason}` : 'Declined by the gateway' });
  return { trxId: change.transaction.trxId, status: change.transaction.status, changed: change.changed };
}
