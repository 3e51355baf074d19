import { AppError } from '../../../contract/common/errors.ts';
import type { CheckoutTransaction } from '../../../contract/checkout/payments.ts';
import type { Logger } from '../../infra/logger.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { loadIntent } from '../payments/intents.ts';
import { startTransaction, type TransactionRecord } from '../payments/transactions.ts';
import { isSandboxDriven } from '../sandbox/gateway.ts';
import { openSandboxSession } from '../sandbox/sessions.ts';
import { countTakenAnswer, isTaken, lockCheckoutGuard } from './limits.ts';
import type { MatchSubmittedTransaction } from './manual-submission-seam.ts';
import { loadCheckout, type CheckoutLinks } from './view.ts';
import { transaction, type Db } from '../db.ts';

export interface StartCheckoutInput {
  gateway: string;
  method?: string;
  gatewayTrxId?: string;
  senderNumber?: string;
}

export interface CheckoutPayDeps {
  keys: PersonalDataKeys;
  links: CheckoutLinks;
  logger: Logger;
  matchSubmittedTransaction?: MatchSubmittedTransaction;
}

/**
 * The customer pays on one gateway. Everything the payment state machine checks
 * (expiry, one live transaction, gateway enabled, conversion, limits, one
 * gateway trx id ever) happens in `startTransaction`, in this same database
 * transaction; the checkout adds what depends on the gateway kind:
 * - manual: the gateway transaction id is required; the transaction awaits
 *   verification, and after commit the SMS-matching seam may match an SMS that
 *   already arrived;
 * - automatic (the sandbox): no gateway transaction id; the transaction is
 *   `processing` and a sandbox session is opened with it (both or neither).
 * The kind-dependent checks come after the payment's own (so an expired link
 * says so whatever the body) and roll the whole attempt back.
 * Before all of them: a disabled brand's payment is refused (BRAND_DISABLED),
 * and a payment whose checkout already answered GATEWAY_TRX_ID_TAKEN too often
 * takes no more ids (limits.ts); each taken answer is counted.
 */
export async function startCheckoutTransaction(em: Db, deps: CheckoutPayDeps, paymentId: string, input: StartCheckoutInput): Promise<CheckoutTransaction> {
  let intentId: number | null = null;
  try {
    return await start(em, deps, paymentId, input, (id) => (intentId = id));
  } catch (err) {
    if (isTaken(err) && intentId !== null) throw await countTakenAnswer(em, intentId, err);
    throw err;
  }
}

async function start(
  em: Db,
  deps: CheckoutPayDeps,
  paymentId: string,
  input: StartCheckoutInput,
  guarded: (intentId: number) => void,
): Promise<CheckoutTransaction> {
  const started = await transaction(em, async (tx): Promise<TransactionRecord> => {
    guarded((await lockCheckoutGuard(tx, paymentId, { submitting: input.gatewayTrxId !== undefined })).intentId);
    let t: TransactionRecord;
    try {
      t = await startTransaction(tx, deps.keys, {
        paymentId,
        gatewayCode: input.gateway,
        method: input.method,
        gatewayTrxId: input.gatewayTrxId ?? null,
        senderNumber: input.senderNumber ?? null,
      });
    } catch (err) {
      // An unknown code is, to the customer, a gateway that cannot take the payment.
      if (err instanceof AppError && err.code === 'GATEWAY_NOT_FOUND') {
        throw new AppError('GATEWAY_UNAVAILABLE', `No gateway ${input.gateway} takes this payment`, { field: 'gateway' });
      }
      throw err;
    }
    if (isSandboxDriven({ type: t.gatewayType })) {
      if (input.gatewayTrxId !== undefined || input.senderNumber !== undefined) {
        const field = input.gatewayTrxId !== undefined ? 'gateway_trx_id' : 'sender_number';
        throw new AppError('VALIDATION_ERROR', `${t.gatewayCode} is an automatic gateway; it does not take ${field}`, { field });
      }
      const intent = await loadIntent(tx, { intentId: t.intentId });
      await openSandboxSession(tx, deps.links.sandboxSecret, t, intent!.expiresAt);
    } else if (!t.gatewayTrxId) {
      throw new AppError('VALIDATION_ERROR', 'gateway_trx_id is required for manual gateways: the transaction id the gateway gave you', {
        field: 'gateway_trx_id',
      });
    }
    return t;
  });

  if (started.gatewayType === 'manual' && deps.matchSubmittedTransaction) {
    try {
      await deps.matchSubmittedTransaction(em, started.id);
    } catch (err) {
      deps.logger.error({ transaction_id: started.id, err: { message: err instanceof Error ? err.message : String(err) } }, 'matching a checkout submission failed; it keeps waiting');
    }
  }
  const { view } = await loadCheckout(em, paymentId, deps.links);
  return view.transaction!;
}
