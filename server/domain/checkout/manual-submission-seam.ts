import type { Db } from '../db.ts';

/**
 * Where SMS matching plugs into the checkout: an SMS that already arrived for
 * the submitted transaction id is matched at that moment (docs/matching.md).
 *
 * After a manual-gateway submission has committed (the transaction is
 * `awaiting_verification` with the customer's gateway transaction id), the
 * checkout calls this with the transaction's id. The implementation runs its own
 * database transaction(s), with the same locking as intake matching
 * (completeTransaction locks the intent, then the transaction), and completes
 * the transaction when a stored, unmatched SMS fits it. The checkout then
 * answers with the transaction as it finds it (so a match shows at once as
 * `completed`). If it throws, the error is logged and the transaction simply
 * keeps waiting; the customer's submission still succeeds.
 *
 * Until an implementation is passed to `checkoutHandlers(deps, { matchSubmittedTransaction })`,
 * submissions wait for SMS intake or an admin.
 */
export type MatchSubmittedTransaction = (em: Db, transactionId: number) => Promise<void>;
