import { compareMoney } from '../money/decimal.ts';

/**
 * Decides which transaction a parsed SMS proves, following "Matching a forwarded
 * SMS" in design.md. Pure: the caller loads rows inside its database transaction,
 * calls this, and applies the result (and relies on the unique constraint on the
 * gateway trx id as the last line of defence against concurrent requests).
 *
 * Confidence scale (stored on every SMS record):
 * - 1    trx id AND amount agree, timing fits: certain.
 * - 0.8  no trx id claim, exactly one open candidate with the exact amount.
 * - 0.8/n  n > 1 such candidates: ambiguous, always `low_confidence` whatever the threshold.
 * - 0    nothing fits, a conflict that needs review, or a duplicate.
 * A result is `matched` only when it names one transaction AND confidence >= threshold,
 * so threshold 1 means "only trx id matches complete automatically".
 */

export const matchStatuses = ['matched', 'no_match', 'no_candidate', 'low_confidence', 'duplicate'] as const;
export type MatchStatus = (typeof matchStatuses)[number];

export const CERTAIN_CONFIDENCE = 1;
export const AMOUNT_ONLY_CONFIDENCE = 0.8;

/** Statuses a transaction may be completed from by an SMS. */
export const OPEN_STATUSES: readonly string[] = ['pending', 'awaiting_verification'];

export interface MatchCandidate {
  id: number;
  amount: string;
  gatewayTrxId: string | null;
  /**
   * What the timing rule compares with the SMS time. The service passes the
   * creation time of the transaction's payment (intent): the checkout creates a
   * manual-gateway transaction only once the customer has paid and typed the
   * trx id, so "older than the transaction" means older than the payment.
   */
  createdAt: Date;
  status: string;
}

export interface MatchResult {
  status: MatchStatus;
  transactionId: number | null;
  confidence: number;
  /** Every transaction the decision looked at as a fit or a conflict; kept for review. */
  candidateIds: number[];
  reason: string;
}

export interface StoredSmsEvidence {
  id: number;
  amount: string;
  trxId: string;
  receivedAt: Date;
  matchStatus: MatchStatus;
}

export interface ReverseMatchResult {
  status: MatchStatus;
  smsId: number | null;
  confidence: number;
  smsIds: number[];
  reason: string;
}

function checkSettings(windowMinutes: number, threshold: number): void {
  if (!(windowMinutes > 0) || !Number.isFinite(windowMinutes)) throw new RangeError('windowMinutes must be a positive number');
  if (!(threshold >= 0 && threshold <= 1)) throw new RangeError('threshold must be between 0 and 1');
}

function hasClaim(trxId: string | null): trxId is string {
  return trxId !== null && trxId.trim() !== '';
}

function sameTrx(a: string | null, b: string): boolean {
  return hasClaim(a) && a.trim().toUpperCase() === b.trim().toUpperCase();
}

/**
 * An SMS is evidence for a transaction only when the transaction existed when the
 * SMS arrived (an older SMS would let anyone replay a past payment's trx id) and
 * was created at most `windowMinutes` before it. Both directions use this one rule,
 * so the outcome does not depend on which of the two arrived first.
 */
export function timingFits(createdAt: Date, receivedAt: Date, windowMinutes: number): boolean {
  const gap = receivedAt.getTime() - createdAt.getTime();
  return gap >= 0 && gap <= windowMinutes * 60_000;
}

function result(status: MatchStatus, transactionId: number | null, confidence: number, candidateIds: number[], reason: string): MatchResult {
  return { status, transactionId, confidence, candidateIds, reason };
}

/** Applies the threshold to a decision that names exactly one transaction. */
function decide(id: number, confidence: number, threshold: number, candidateIds: number[], why: string): MatchResult {
  if (confidence >= threshold) return result('matched', id, confidence, candidateIds, why);
  return result('low_confidence', null, confidence, candidateIds, `${why}, but confidence ${confidence} is below the threshold ${threshold}`);
}

/**
 * Forward direction: an SMS has just been parsed. `candidates` are the brand's
 * transactions on the SMS's gateway in an open status created within the window,
 * PLUS every transaction (any status, any age) whose gateway trx id equals the
 * parsed one: those decide `duplicate` and conflicts. Extra rows are harmless;
 * the rules below filter them.
 */
export function chooseMatch(input: {
  parsed: { amount: string; trxId: string };
  smsReceivedAt: Date;
  candidates: readonly MatchCandidate[];
  windowMinutes: number;
  threshold: number;
}): MatchResult {
  const { parsed, smsReceivedAt, candidates, windowMinutes, threshold } = input;
  checkSettings(windowMinutes, threshold);
  const fits = (c: MatchCandidate) => OPEN_STATUSES.includes(c.status) && timingFits(c.createdAt, smsReceivedAt, windowMinutes);
  const sameAmount = (c: MatchCandidate) => compareMoney(c.amount, parsed.amount) === 0;
  const byId = (a: MatchCandidate, b: MatchCandidate) => a.id - b.id;

  const claimers = candidates.filter((c) => sameTrx(c.gatewayTrxId, parsed.trxId)).sort(byId);
  const done = claimers.find((c) => c.status === 'completed');
  if (done) {
    return result('duplicate', null, 0, [done.id], `gateway trx id ${parsed.trxId} already completed transaction ${done.id}`);
  }
  if (claimers.length > 0) {
    const ids = claimers.map((c) => c.id);
    const certain = claimers.filter((c) => fits(c) && sameAmount(c));
    if (certain.length === 1) {
      const c = certain[0]!;
      return decide(c.id, CERTAIN_CONFIDENCE, threshold, [c.id, ...ids.filter((id) => id !== c.id)], 'gateway trx id and amount match');
    }
    // A claimed trx id is never handed to another transaction by amount alone: the
    // unique constraint would refuse it, and a human should look at the conflict.
    const why =
      certain.length > 1
        ? `several transactions claim gateway trx id ${parsed.trxId} with amount ${parsed.amount}`
        : describeConflict(claimers, parsed, fits, sameAmount);
    return result('low_confidence', null, 0, ids, why);
  }

  const byAmount = candidates.filter((c) => !hasClaim(c.gatewayTrxId) && fits(c) && sameAmount(c)).sort(byId);
  const ids = byAmount.map((c) => c.id);
  if (byAmount.length === 1) return decide(ids[0]!, AMOUNT_ONLY_CONFIDENCE, threshold, ids, `only open transaction with amount ${parsed.amount}`);
  if (byAmount.length > 1) {
    const confidence = AMOUNT_ONLY_CONFIDENCE / byAmount.length;
    return result('low_confidence', null, confidence, ids, `${byAmount.length} open transactions have amount ${parsed.amount}`);
  }
  return result('no_candidate', null, 0, [], `no open transaction with amount ${parsed.amount} created within ${windowMinutes} minutes before the SMS`);
}

function describeConflict(
  claimers: MatchCandidate[],
  parsed: { amount: string; trxId: string },
  fits: (c: MatchCandidate) => boolean,
  sameAmount: (c: MatchCandidate) => boolean,
): string {
  const c = claimers[0]!;
  if (!OPEN_STATUSES.includes(c.status)) return `transaction ${c.id} claims gateway trx id ${parsed.trxId} but is ${c.status}`;
  if (!fits(c)) return `transaction ${c.id} claims gateway trx id ${parsed.trxId} but was not created within the window before the SMS`;
  if (!sameAmount(c)) return `transaction ${c.id} claims gateway trx id ${parsed.trxId} with amount ${c.amount}, the SMS says ${parsed.amount}`;
  return `conflicting claims on gateway trx id ${parsed.trxId}`;
}

/**
 * Reverse direction: a customer has just submitted `transaction.gatewayTrxId`, and
 * SMS records stored earlier may already prove it (design.md rule 4). `storedSms`
 * are the gateway's parsed SMS records carrying that trx id, any status. Only
 * records still unmatched (`no_candidate`, `low_confidence`) can be used; a
 * `matched` one means the trx id already completed something (`duplicate`), and
 * `duplicate` records are copies whose original decides.
 */
export function matchSubmittedTrxId(input: {
  transaction: MatchCandidate & { gatewayTrxId: string };
  storedSms: readonly StoredSmsEvidence[];
  windowMinutes: number;
  threshold: number;
}): ReverseMatchResult {
  const { transaction: tx, storedSms, windowMinutes, threshold } = input;
  // Only certain matches exist in this direction (confidence 1 >= any threshold);
  // the threshold is still validated so both directions take the same settings.
  checkSettings(windowMinutes, threshold);
  const out = (status: MatchStatus, smsId: number | null, confidence: number, smsIds: number[], reason: string): ReverseMatchResult => ({
    status,
    smsId,
    confidence,
    smsIds,
    reason,
  });
  if (!OPEN_STATUSES.includes(tx.status)) return out('no_candidate', null, 0, [], `transaction ${tx.id} is ${tx.status}`);

  const relevant = storedSms.filter((s) => sameTrx(s.trxId, tx.gatewayTrxId)).sort((a, b) => a.id - b.id);
  const used = relevant.find((s) => s.matchStatus === 'matched');
  if (used) return out('duplicate', null, 0, [used.id], `gateway trx id ${tx.gatewayTrxId} was already matched by SMS ${used.id}`);

  const open = relevant.filter((s) => s.matchStatus === 'no_candidate' || s.matchStatus === 'low_confidence');
  const ids = open.map((s) => s.id);
  if (open.length === 0) return out('no_candidate', null, 0, [], `no unmatched SMS carries gateway trx id ${tx.gatewayTrxId} yet`);
  if (open.length > 1) return out('low_confidence', null, 0, ids, `${open.length} SMS carry gateway trx id ${tx.gatewayTrxId}`);

  const sms = open[0]!;
  if (!timingFits(tx.createdAt, sms.receivedAt, windowMinutes)) {
    return out('low_confidence', null, 0, ids, `SMS ${sms.id} was not received within ${windowMinutes} minutes after transaction ${tx.id} was created`);
  }
  if (compareMoney(sms.amount, tx.amount) !== 0) {
    return out('low_confidence', null, 0, ids, `SMS ${sms.id} says amount ${sms.amount}, transaction ${tx.id} is ${tx.amount}`);
  }
  return out('matched', sms.id, CERTAIN_CONFIDENCE, ids, 'gateway trx id and amount match');
}
