import type { BalanceChainState, SmsRecordStatus } from '../../../../contract/vocabulary.ts';
import { compareMoney } from '../../money/decimal.ts';
import { comparePayerNumbers, smsNumberToE164 } from './payer-number.ts';
import { rankByIdCloseness } from './typo.ts';

/**
 * Decides which transaction a parsed SMS proves, following docs/matching.md.
 * Pure: the caller loads rows inside its database transaction, calls this, and
 * applies the result (and relies on the unique constraint on the gateway trx
 * id as the last line of defence against concurrent requests).
 *
 * Only certain evidence completes: a transaction claims the SMS's trx id, the
 * amounts are equal, the timing fits (device clock corrected, small grace),
 * the payer numbers do not disagree, the balance chain does not contradict the
 * SMS and the amount is not above the gateway's review threshold. There is no
 * amount-only match: everything else goes to review with a reason code and
 * ranked suggestions. Confidence is 1 for `matched`, 0 for everything else.
 */

/** What matching decides for a record: every record status but `pending`. */
export type MatchStatus = Exclude<SmsRecordStatus, 'pending'>;

export const CERTAIN_CONFIDENCE = 1;

/** Statuses a transaction may be completed from by an SMS. */
export const OPEN_STATUSES: readonly string[] = ['pending', 'awaiting_verification'];

/** Why a record got its status; stored as `reason_code` and listed in docs/matching.md. */
export const reasonCodes = [
  'certain_match',
  'not_official_sender',
  'not_parsed',
  'not_a_payment',
  'money_out',
  'duplicate_trx_id',
  'duplicate_content',
  'no_candidate',
  'trx_id_unclaimed',
  'several_claims',
  'claimed_by_other_brand',
  'claimed_in_other_mode',
  'claim_not_open',
  'amount_mismatch',
  'outside_window',
  'dated_before_payment',
  'sender_number_mismatch',
  'balance_mismatch',
  'balance_impossible',
  'balance_unreadable',
  'balance_after_break',
  'balance_missing',
  'balance_new_sim',
  'account_mismatch',
  'trx_id_contradicted',
  'payer_is_another_customer',
  'above_review_threshold',
  'completion_refused',
  // Stored by intake (sms/intake/parts.ts), never by matching: a long SMS whose parts never all arrived.
  'incomplete_parts',
] as const;
export type ReasonCode = (typeof reasonCodes)[number];

/** Where the SMS stands in its device's balance chain (balance-chain.ts). */
export type ChainState = BalanceChainState | null;

/**
 * Chain states that keep the SMS from completing anything by itself: it
 * contradicts the chain, or the chain is untrusted since a break (`after_break`),
 * or it lacks the balance its wallet's messages carry (`missing`).
 */
const CHAIN_CONTRADICTIONS: Partial<Record<NonNullable<ChainState>, ReasonCode>> = {
  mismatch: 'balance_mismatch',
  impossible: 'balance_impossible',
  unreadable: 'balance_unreadable',
  after_break: 'balance_after_break',
  missing: 'balance_missing',
  new_sim: 'balance_new_sim',
};
const CHAIN_CODES: ReadonlySet<ReasonCode> = new Set(Object.values(CHAIN_CONTRADICTIONS));

export interface MatchCandidate {
  id: number;
  amount: string;
  gatewayTrxId: string | null;
  /**
   * What the timing rule compares with the SMS time: the creation time of the
   * transaction's payment (intent). The checkout creates a manual-gateway
   * transaction only once the customer has paid and typed the trx id.
   */
  createdAt: Date;
  status: string;
  /** The payer's number the customer declared at checkout, E.164, or null. */
  payerNumber?: string | null;
  /** Its gateway's review threshold, when it has its own (the SMS may read for several gateways); else the rules'. */
  reviewAbove?: string | null;
  /** The brand's wallet account the customer was told to pay into, when it has one (else the gateway's own number). */
  account?: PayeeAccount | null;
}

/** Where a payment's money was to arrive: the account's number, and the phone and SIM slot that receive its SMS (null: any). */
export interface PayeeAccount {
  number: string;
  deviceId: number | null;
  simSlot: number | null;
}

/** The phone and SIM an SMS arrived on, as the app reported them. */
export interface SmsArrival {
  deviceId: number;
  simSlot: number | null;
  /** The receiving SIM's own number, when Android knows it. */
  receivingNumber: string | null;
}

export interface Suggestion {
  transactionId: number;
  /** Why a person should look at it, e.g. `claims the id, amount 600.00 differs` or `claimed id 1 character away`. */
  why: string;
  /** Closeness of its claimed id to the SMS's (typo.ts), null when it has none; lower is closer. */
  distance: number | null;
}

export interface MatchResult {
  status: MatchStatus;
  transactionId: number | null;
  confidence: number;
  /** Every transaction the decision looked at, best suggestion first; kept for review. */
  candidateIds: number[];
  reason: string;
  reasonCode: ReasonCode;
  suggestions: Suggestion[];
}

export interface SmsEvidence {
  amount: string;
  trxId: string;
  senderNumber: string | null;
  /** The SMS time with the device's clock offset corrected (never later than the server's receipt). */
  time: Date;
  chainState: ChainState;
  /**
   * An earlier SMS about the same trx id contradicted its chain or was refused
   * (docs/matching.md, rule 9): this one, whatever it says, is for a person.
   */
  trxIdContradicted?: boolean;
  /** The latest moment the time stated in the SMS's text can stand for (parser.ts), when it states one. */
  statedAt?: Date | null;
  /** Where it arrived; absent: not compared (a caller that has no phone, e.g. a template try-out). */
  arrival?: SmsArrival;
}

export interface MatchRules {
  windowMinutes: number;
  /** Tolerance of the timing rule for an SMS that looks slightly older than its payment (clock skew left after correction). */
  graceSeconds: number;
  /** The gateway's review threshold: a larger amount always goes to review. */
  reviewAbove: string | null;
}

function checkRules(rules: MatchRules): void {
  if (!(rules.windowMinutes > 0) || !Number.isFinite(rules.windowMinutes)) throw new RangeError('windowMinutes must be a positive number');
  if (!(rules.graceSeconds >= 0) || !Number.isFinite(rules.graceSeconds)) throw new RangeError('graceSeconds must be zero or more');
}

function sameTrx(a: string | null, b: string): boolean {
  return a !== null && a.trim() !== '' && a.trim().toUpperCase() === b.trim().toUpperCase();
}

/**
 * An SMS is evidence for a transaction only when the payment existed when the
 * SMS arrived (an older SMS would let anyone replay a past payment's trx id),
 * up to `graceSeconds` of clock skew, and was created at most `windowMinutes`
 * before it. Both directions use this one rule.
 */
function timingFits(createdAt: Date, smsTime: Date, windowMinutes: number, graceSeconds = 0): boolean {
  const gap = smsTime.getTime() - createdAt.getTime();
  return gap >= -graceSeconds * 1000 && gap <= windowMinutes * 60_000;
}

/**
 * The first thing that keeps `c` from being certainly proved by `sms`, or null
 * when nothing does. The SMS's id is taken to be claimed by `c` already.
 */
function contradiction(sms: SmsEvidence, c: MatchCandidate, rules: MatchRules): { code: ReasonCode; why: string } | null {
  // The SMS's own contradiction first: its status is then `balance_mismatch` whoever claims it, in both directions.
  const chain = chainContradiction(sms);
  if (chain) return chain;
  if (!OPEN_STATUSES.includes(c.status)) return { code: 'claim_not_open', why: `transaction ${c.id} claims the id but is ${c.status}` };
  const account = accountContradiction(sms.arrival, c.account ?? null);
  if (account) return { code: 'account_mismatch', why: `transaction ${c.id} was to be paid into ${c.account!.number}, but ${account}` };
  if (compareMoney(c.amount, sms.amount) !== 0) {
    return { code: 'amount_mismatch', why: `transaction ${c.id} claims the id with amount ${c.amount}, the SMS says ${sms.amount}` };
  }
  if (!timingFits(c.createdAt, sms.time, rules.windowMinutes, rules.graceSeconds)) {
    return { code: 'outside_window', why: `the SMS time does not fall between the creation of transaction ${c.id}'s payment and ${rules.windowMinutes} minutes after it` };
  }
  // The wallet's own time in the text: a message it dated before the payment existed (beyond the clock grace) is
  // an older payment's, whenever the phone says it arrived.
  if (sms.statedAt && sms.statedAt.getTime() < c.createdAt.getTime() - rules.graceSeconds * 1000) {
    return { code: 'dated_before_payment', why: `the SMS's text dates it ${sms.statedAt.toISOString()}, before transaction ${c.id}'s payment was created` };
  }
  if (comparePayerNumbers(sms.senderNumber, c.payerNumber ?? null) === 'disagree') {
    return { code: 'sender_number_mismatch', why: `the SMS names another payer number than the one declared for transaction ${c.id}` };
  }
  const reviewAbove = c.reviewAbove !== undefined ? c.reviewAbove : rules.reviewAbove;
  if (reviewAbove !== null && compareMoney(sms.amount, reviewAbove) > 0) {
    return { code: 'above_review_threshold', why: `amount ${sms.amount} is above the gateway's review threshold ${reviewAbove}` };
  }
  if (sms.trxIdContradicted) {
    return { code: 'trx_id_contradicted', why: `an earlier SMS about gateway trx id ${sms.trxId} contradicted the balance chain or was refused` };
  }
  return null;
}

/**
 * Why an SMS cannot be evidence of money arriving in `account`, or null
 * (docs/matching.md, "Wallet accounts"): it came from another phone than the
 * account's, from another SIM slot of it (when both are known), or names
 * another receiving number (when the phone knows its SIM's number).
 */
export function accountContradiction(arrival: SmsArrival | undefined, account: PayeeAccount | null): string | null {
  if (!arrival || !account) return null;
  if (account.deviceId !== null && arrival.deviceId !== account.deviceId) return `the SMS came from phone ${arrival.deviceId}, not the account's phone ${account.deviceId}`;
  if (account.simSlot !== null && arrival.simSlot !== null && arrival.simSlot !== account.simSlot) {
    return `the SMS arrived on SIM slot ${arrival.simSlot}, not the account's slot ${account.simSlot}`;
  }
  if (arrival.receivingNumber !== null) {
    const theirs = smsNumberToE164(arrival.receivingNumber);
    const ours = smsNumberToE164(account.number);
    if (theirs !== null && ours !== null && theirs !== ours) return `the SMS arrived on the SIM of ${arrival.receivingNumber}`;
  }
  return null;
}

const CHAIN_WHY: Partial<Record<NonNullable<ChainState>, string>> = {
  after_break: 'the balance chain broke before this SMS and was not repaired since: it follows an untrusted message',
  missing: "the SMS carries no readable balance, though its wallet's messages on this phone do",
  new_sim: "it is the first balance of this wallet on this SIM, while the phone's other SIM already has this wallet's chain and no wallet account names this SIM: a person confirms the SIM once",
};

function chainContradiction(sms: SmsEvidence): { code: ReasonCode; why: string } | null {
  const code = sms.chainState ? CHAIN_CONTRADICTIONS[sms.chainState] : undefined;
  if (!code) return null;
  return { code, why: CHAIN_WHY[sms.chainState!] ?? `the reported balance contradicts the device's balance chain (${sms.chainState})` };
}

function statusFor(code: ReasonCode): MatchStatus {
  return CHAIN_CODES.has(code) ? 'balance_mismatch' : 'low_confidence';
}

function review(code: ReasonCode, reason: string, suggestions: Suggestion[]): MatchResult {
  return { status: statusFor(code), transactionId: null, confidence: 0, candidateIds: suggestions.map((s) => s.transactionId), reason, reasonCode: code, suggestions };
}

/**
 * Forward direction: an SMS has just been parsed. `candidates` are the brand's
 * open transactions on the SMS's gateways with the SMS's amount created within
 * the window (for suggestions), PLUS every transaction of the brand (any
 * status, any age) whose gateway trx id equals the parsed one. Extra rows are
 * harmless; the rules below filter them.
 */
export function chooseMatch(input: { sms: SmsEvidence; candidates: readonly MatchCandidate[]; rules: MatchRules }): MatchResult {
  const { sms, candidates, rules } = input;
  checkRules(rules);
  const byId = (a: MatchCandidate, b: MatchCandidate) => a.id - b.id;

  const claimers = candidates.filter((c) => sameTrx(c.gatewayTrxId, sms.trxId)).sort(byId);
  const done = claimers.find((c) => c.status === 'completed');
  if (done) {
    return {
      status: 'duplicate',
      transactionId: null,
      confidence: 0,
      candidateIds: [done.id],
      reason: `gateway trx id ${sms.trxId} already completed transaction ${done.id}`,
      reasonCode: 'duplicate_trx_id',
      suggestions: [],
    };
  }

  if (claimers.length > 0) {
    const checked = claimers.map((c) => ({ c, bad: contradiction(sms, c, rules) }));
    const suggestions = checked.map(({ c, bad }) => ({ transactionId: c.id, why: bad?.why ?? `transaction ${c.id} claims the id with amount ${c.amount}`, distance: 0 }));
    const chain = chainContradiction(sms);
    if (chain) return review(chain.code, chain.why, suggestions);
    if (claimers.length > 1) {
      // One id cannot pay two payments; a person decides which claim is genuine.
      return review('several_claims', `${claimers.length} transactions claim gateway trx id ${sms.trxId}`, suggestions);
    }
    const { c, bad } = checked[0]!;
    if (bad) return review(bad.code, bad.why, suggestions);
    // The claimer names no payer, but the SMS's payer is another open payment's customer: the claim may be a
    // front-run of an id someone else paid with (docs/matching.md, section 3).
    if ((c.payerNumber ?? null) === null && sms.senderNumber !== null) {
      const theirs = candidates.filter(
        (o) =>
          o.id !== c.id &&
          !sameTrx(o.gatewayTrxId, sms.trxId) &&
          OPEN_STATUSES.includes(o.status) &&
          compareMoney(o.amount, sms.amount) === 0 &&
          comparePayerNumbers(sms.senderNumber, o.payerNumber ?? null) === 'agree',
      );
      if (theirs.length > 0) {
        return review(
          'payer_is_another_customer',
          `transaction ${c.id} claims the id without naming a payer, but the SMS's payer is the customer of open transaction ${theirs.map((o) => o.id).join(', ')}`,
          [...suggestions, ...theirs.sort(byId).map((o) => ({ transactionId: o.id, why: `open with amount ${o.amount}, its customer's number is the SMS's payer`, distance: null }))],
        );
      }
    }
    return {
      status: 'matched',
      transactionId: c.id,
      confidence: CERTAIN_CONFIDENCE,
      candidateIds: [c.id],
      reason: 'gateway trx id and amount match, timing fits, nothing contradicts',
      reasonCode: 'certain_match',
      suggestions: [],
    };
  }

  // Nobody claims the id: never a match. Open payments with the same amount are
  // suggestions, those whose claimed id is a likely typo of the SMS's first.
  const open = candidates.filter(
    (c) => OPEN_STATUSES.includes(c.status) && compareMoney(c.amount, sms.amount) === 0 && timingFits(c.createdAt, sms.time, rules.windowMinutes, rules.graceSeconds),
  );
  const suggestions = rankByIdCloseness(sms.trxId, open);
  const chain = chainContradiction(sms);
  if (chain) return review(chain.code, `no transaction claims gateway trx id ${sms.trxId}, and ${chain.why}`, suggestions);
  if (suggestions.length === 0) {
    return { ...review('no_candidate', `no transaction claims gateway trx id ${sms.trxId} and no open payment has amount ${sms.amount} within the window`, []), status: 'no_candidate' };
  }
  return review('trx_id_unclaimed', `no transaction claims gateway trx id ${sms.trxId}; ${suggestions.length} open payment(s) have amount ${sms.amount}`, suggestions);
}

export interface StoredSmsEvidence extends SmsEvidence {
  id: number;
  matchStatus: MatchStatus;
  /** A person dismissed it (it proves no payment). */
  refused?: boolean;
}

export interface ReverseMatchResult {
  status: MatchStatus;
  smsId: number | null;
  confidence: number;
  smsIds: number[];
  reason: string;
  reasonCode: ReasonCode;
}

/**
 * Reverse direction: a customer has just submitted `transaction.gatewayTrxId`,
 * and SMS records stored earlier may already prove it (docs/matching.md,
 * "Order does not matter"). `storedSms` are the gateway's parsed records
 * carrying that trx id, any status. Only records still waiting for a claim
 * (`no_candidate`, `low_confidence`) can be used, under the same rules as the
 * forward direction; a `matched` one means the id already completed something.
 */
export function matchSubmittedTrxId(input: {
  transaction: MatchCandidate & { gatewayTrxId: string };
  storedSms: readonly StoredSmsEvidence[];
  rules: MatchRules;
  /** Other open payments of the SMS's amount and their payer numbers (declared, else the customer's phone): see chooseMatch. */
  otherOpenPayers?: ReadonlyArray<{ id: number; payerNumber: string }>;
}): ReverseMatchResult {
  const { transaction: tx, storedSms, rules } = input;
  checkRules(rules);
  const out = (status: MatchStatus, smsId: number | null, smsIds: number[], reason: string, reasonCode: ReasonCode): ReverseMatchResult => ({
    status,
    smsId,
    confidence: status === 'matched' ? CERTAIN_CONFIDENCE : 0,
    smsIds,
    reason,
    reasonCode,
  });
  if (!OPEN_STATUSES.includes(tx.status)) return out('no_candidate', null, [], `transaction ${tx.id} is ${tx.status}`, 'claim_not_open');

  const relevant = storedSms.filter((s) => sameTrx(s.trxId, tx.gatewayTrxId)).sort((a, b) => a.id - b.id);
  const used = relevant.find((s) => s.matchStatus === 'matched');
  if (used) return out('duplicate', null, [used.id], `gateway trx id ${tx.gatewayTrxId} was already matched by SMS ${used.id}`, 'duplicate_trx_id');

  const open = relevant.filter((s) => s.matchStatus === 'no_candidate' || s.matchStatus === 'low_confidence');
  const ids = open.map((s) => s.id);
  if (open.length === 0) return out('no_candidate', null, [], `no unmatched SMS carries gateway trx id ${tx.gatewayTrxId} yet`, 'no_candidate');
  if (open.length > 1) return out('low_confidence', null, ids, `${open.length} SMS carry gateway trx id ${tx.gatewayTrxId}`, 'several_claims');

  // An SMS about this id that contradicted its chain (or a person refused) makes any other one about it a person's call.
  const contradicted = relevant.some((s) => s.matchStatus === 'balance_mismatch' || s.refused === true);
  const sms = { ...open[0]!, trxIdContradicted: contradicted || open[0]!.trxIdContradicted };
  const bad = contradiction(sms, tx, rules);
  if (bad) return out(statusFor(bad.code), null, ids, `SMS ${sms.id}: ${bad.why}`, bad.code);
  // As in chooseMatch: a claim naming no payer does not win an SMS whose payer is another open payment's customer.
  if ((tx.payerNumber ?? null) === null && sms.senderNumber !== null) {
    const theirs = (input.otherOpenPayers ?? []).filter((o) => o.id !== tx.id && comparePayerNumbers(sms.senderNumber, o.payerNumber) === 'agree');
    if (theirs.length > 0) {
      return out('low_confidence', null, ids, `SMS ${sms.id}: transaction ${tx.id} names no payer, but the SMS's payer is the customer of open transaction ${theirs.map((o) => o.id).join(', ')}`, 'payer_is_another_customer');
    }
  }
  return out('matched', sms.id, ids, 'gateway trx id and amount match, timing fits, nothing contradicts', 'certain_match');
}
