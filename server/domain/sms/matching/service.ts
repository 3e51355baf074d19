import { AppError } from '../../../../contract/common/errors.ts';
import type { PiiCipher } from '../../../infra/crypto/pii-cipher.ts';
import { compareMoney } from '../../money/decimal.ts';
import { completeLockedTransactions, completeTransaction, completionRefusal, TRANSACTION_SENDER_CONTEXT, transactionBinding } from '../../payments/transactions.ts';
import { effectiveSettings, getSettings, settingKeys, type Settings } from '../../settings/service.ts';
import type { MatchedRecordState, MatchSmsRecords } from '../intake/matching-seam.ts';
import { isOfficialSender, toGatewaySmsConfig, type CandidateQuery, type CandidateRow, type GatewaySmsConfig, type LockedCandidate } from './candidates.ts';
import { chainWalletKey, walletKey } from './balance-chain.ts';
import { batchReads, ChainRepairInBatch, type BatchRecordPlan, type DecideIo } from './batch-reads.ts';
import { chooseMatch, type MatchResult, type ReasonCode } from './matcher.ts';
import { parseSms, type ParsedSms } from '../templates/parser.ts';
import { paysPayments } from '../templates/template.ts';
import { requestBackfillForChainBreak } from '../../recovery/backfill.ts';
import { claimPendingRecords, recordThatProved, SMS_BODY_CONTEXT, storeOutcomes, type PendingSmsRecord, type SmsOutcome } from './queries/records.ts';
import { transaction, type Db } from '../../db.ts';

/**
 * Applies the pure matcher (docs/matching.md) to stored SMS records, a batch
 * at a time (one SMS is a batch of one): one database transaction per batch,
 * in which its records are decided, their places in the balance chain
 * recorded, the transactions they prove completed (with their
 * `payment.completed` events) and the records marked, or none of it.
 */

export interface MatchSettings {
  windowMinutes: number;
  graceSeconds: number;
}

export async function loadMatchSettings(em: Db): Promise<MatchSettings> {
  return matchSettingsOf(await getSettings(em));
}

function matchSettingsOf(s: Settings): MatchSettings {
  return { windowMinutes: s.match_window_minutes, graceSeconds: s.match_clock_grace_seconds };
}

export interface SmsMatchDeps {
  cipher: PiiCipher;
}

/** The payer number a customer declared at checkout, in clear (payments/transactions.ts encrypts it). */
export function declaredPayerNumber(cipher: PiiCipher, t: { brandId: number; trxId: string; payerNumberEncrypted: string | null }): string | null {
  return t.payerNumberEncrypted === null ? null : cipher.decrypt(t.payerNumberEncrypted, TRANSACTION_SENDER_CONTEXT, transactionBinding(t.brandId, t.trxId));
}

/**
 * One reading of the SMS: the gateways whose templates read it the same way.
 * Gateways are global, so several may share an official sender (and usually
 * a template): an SMS from it is evidence for a payment on any of them.
 */
interface Reading {
  parsed: ParsedSms;
  gatewayIds: number[];
}

function readings(sms: { sender: string; body: string }, gateways: readonly GatewaySmsConfig[]): Reading[] {
  const out: Reading[] = [];
  for (const g of gateways) {
    const parsed = parseSms(sms, [g]);
    if (!parsed) continue;
    const same = out.find((r) => r.parsed.direction === parsed.direction && r.parsed.trxId === parsed.trxId && compareMoney(r.parsed.amount, parsed.amount) === 0);
    if (same) same.gatewayIds.push(g.id);
    else out.push({ parsed, gatewayIds: [g.id] });
  }
  // Money out first: when any gateway of the sender reads the SMS as a debit, it is one
  // (docs/matching.md), however another gateway's template reads it; it never pays anything.
  // Likewise a credit that is never a payment (cashback, template.ts NON_PAYMENT_KINDS).
  const rank = (r: Reading) => (r.parsed.direction === 'out' ? 0 : paysPayments(r.parsed) ? 2 : 1);
  return out.sort((a, b) => rank(a) - rank(b));
}

function noMatch(reasonCode: ReasonCode, reason: string): SmsOutcome {
  return { status: 'no_match', gatewayId: null, parsed: null, transactionId: null, confidence: 0, candidateIds: [], reason, reasonCode, suggestions: [], chain: null };
}

function parsedOf(p: ParsedSms): NonNullable<SmsOutcome['parsed']> {
  return { direction: p.direction, kind: p.kind, amount: p.amount, trxId: p.trxId, senderNumber: p.senderNumber, balance: p.balance, fee: p.fee, statedAt: p.statedAt };
}

function outcomeOf(reading: Reading, r: MatchResult, gatewayId: number, chain: SmsOutcome['chain']): SmsOutcome {
  return {
    status: r.status,
    gatewayId,
    parsed: parsedOf(reading.parsed),
    transactionId: r.transactionId,
    confidence: r.confidence,
    candidateIds: r.candidateIds,
    reason: r.reason,
    reasonCode: r.reasonCode,
    suggestions: r.suggestions,
    chain,
  };
}

/** What planning a record reads of it, known from the claim. */
type PlannedRecord = Pick<PendingSmsRecord, 'id' | 'brandId' | 'deviceId' | 'mode' | 'sender' | 'smsTime' | 'simSlot'>;

/** The record's balance chain: its wallet on its phone's SIM slot (balance-chain.ts chainWalletKey). */
function chainOf(rec: Pick<PendingSmsRecord, 'sender' | 'simSlot'>, gateways: readonly GatewaySmsConfig[]): string {
  return chainWalletKey(walletKey(rec.sender, gateways), rec.simSlot);
}

/**
 * The candidate query of a money-in SMS: the window widened by the clock grace, which the matcher applies
 * exactly. Both directions ask it (submission.ts, for the other open payments an SMS could be for).
 */
export function candidateQueryOf(q: Omit<CandidateQuery, 'windowMinutes'>, settings: MatchSettings): CandidateQuery {
  return { ...q, smsTime: new Date(q.smsTime.getTime() + settings.graceSeconds * 1000), windowMinutes: settings.windowMinutes + Math.ceil(settings.graceSeconds / 60) };
}

function candidateQuery(rec: PlannedRecord, r: Reading, settings: MatchSettings): CandidateQuery {
  return candidateQueryOf({ brandId: rec.brandId, mode: rec.mode, gatewayIds: r.gatewayIds, trxId: r.parsed.trxId!, amount: r.parsed.amount, smsTime: rec.smsTime }, settings);
}

/** A payment's payer number in clear: declared at checkout, else its customer's phone (`phones`, by intent id), else null. */
export function payerNumberOf(cipher: PiiCipher, c: CandidateRow, phones: ReadonlyMap<number, string>): string | null {
  return c.payerNumberEncrypted ? declaredPayerNumber(cipher, c) : (phones.get(c.intentId) ?? null);
}

/** The official gateways of the record's sender and their readings of its text (pure). */
function readRecord(rec: Pick<PendingSmsRecord, 'sender'>, body: string, gateways: readonly GatewaySmsConfig[]) {
  const official = gateways.filter((g) => isOfficialSender(g, rec.sender));
  return { official, all: official.length === 0 ? [] : readings({ sender: rec.sender, body }, official) };
}

/**
 * What deciding the record will read, known from its text alone: the batch
 * takes every lock and read of its records up front, once it claimed them
 * (batch-reads.ts). Mirrors decide() step by step.
 */
function planRecord(rec: PlannedRecord, body: string, gateways: readonly GatewaySmsConfig[], settings: MatchSettings): BatchRecordPlan {
  const plan: BatchRecordPlan = { recordId: rec.id, deviceId: rec.deviceId, smsTime: rec.smsTime, chain: null, queries: [] };
  const { all } = readRecord(rec, body, gateways);
  if (all.length === 0) return plan;
  const first = all[0]!.parsed;
  plan.chain = { wallet: chainOf(rec, gateways), reading: first };
  if (!paysPayments(first)) return plan;
  plan.queries = all.filter((r) => paysPayments(r.parsed)).map((r) => candidateQuery(rec, r, settings));
  return plan;
}

/**
 * Decides among the candidates of every reading (normally exactly one). Takes
 * the locks in the global order: the balance chain of the device and wallet,
 * gateway trx ids, then intents and transactions; decisions are made on the
 * rows as they are once locked. `io` answers from what the batch read and
 * locked for all its records at once (batch-reads.ts).
 */
async function decide(
  io: DecideIo,
  rec: PendingSmsRecord,
  body: string,
  gateways: readonly GatewaySmsConfig[],
  settings: MatchSettings,
  cipher: PiiCipher,
): Promise<{ outcome: SmsOutcome; locked: ReadonlyMap<number, LockedCandidate> }> {
  const none = new Map<number, LockedCandidate>();
  const { official, all } = readRecord(rec, body, gateways);
  if (official.length === 0) return { outcome: noMatch('not_official_sender', 'the sender is not an official SMS sender of any gateway'), locked: none };
  if (all.length === 0) {
    return { outcome: noMatch('not_parsed', `no SMS template of gateway ${official.map((g) => g.code).join(', ')} read an amount and a transaction id in the message`), locked: none };
  }

  const first = all[0]!.parsed;
  const wallet = chainOf(rec, gateways);
  // A slot that a wallet account of one of the sender's gateways names is that account's SIM.
  const pinned = rec.simSlot !== null && rec.pinnedSlots.some((p) => p.simSlot === rec.simSlot && official.some((g) => g.id === p.gatewayId));
  const verdict = await io.chain({ deviceId: rec.deviceId, wallet, recordId: rec.id, smsTime: rec.smsTime, reading: first, sim: { slot: rec.simSlot, pinned } });
  const chain = { wallet, smsTime: rec.smsTime, state: verdict.state, previousId: verdict.previousId, expected: verdict.expected, balance: verdict.balance };
  if (first.direction === 'out') {
    const outcome: SmsOutcome = {
      status: 'money_out',
      gatewayId: all[0]!.gatewayIds[0]!,
      parsed: parsedOf(first),
      transactionId: null,
      confidence: 0,
      candidateIds: [],
      reason: `money out of the wallet (${first.kind ?? 'debit'}): balance chain evidence, never a payment`,
      reasonCode: 'money_out',
      suggestions: [],
      chain,
    };
    return { outcome, locked: none };
  }
  if (!paysPayments(first)) {
    // A credit that is never a customer's payment (a wallet's cashback): chain evidence, like a debit.
    const outcome: SmsOutcome = {
      ...noMatch('not_a_payment', `money into the wallet that is never a customer's payment (${first.kind}): balance chain evidence only`),
      gatewayId: all[0]!.gatewayIds[0]!,
      parsed: parsedOf(first),
      chain,
    };
    return { outcome, locked: none };
  }
  const ins = all.filter((r) => paysPayments(r.parsed));

  // Read under the trx id locks (taken for the whole batch, batch-reads.ts): an earlier SMS about one of these ids that contradicted its chain, or was refused.
  const contradicted = await io.contradicted({ brandId: rec.brandId, mode: rec.mode, recordId: rec.id, trxIds: ins.map((r) => r.parsed.trxId!) });
  const loaded: CandidateRow[][] = [];
  for (const [i, r] of ins.entries()) loaded.push(await io.candidates(rec.id, i, candidateQuery(rec, r, settings)));
  // Every loaded row can decide the outcome (a claimer of the trx id, or open with the exact amount): lock the open ones.
  const fresh = await io.lockOpen(loaded.flat());

  // A payment without a number declared at checkout is compared with its customer's phone, when it has one: a
  // claimer's, to check the payer; another open one's, to see whether the SMS's payer is its customer.
  const claimsOf = (c: CandidateRow, i: number) => c.gatewayTrxId?.toUpperCase() === ins[i]!.parsed.trxId;
  const undeclared = ins.flatMap((r, i) =>
    r.parsed.senderNumber === null
      ? []
      : loaded[i]!.map((c) => fresh.get(c.id) ?? c).filter((c) => c.brandId === rec.brandId && c.mode === rec.mode && !c.payerNumberEncrypted),
  );
  const customerPhones = await io.customerPhones(undeclared);

  const outcomes = ins.map((reading, i) => {
    const trxId = reading.parsed.trxId!;
    // The account a transaction was paid into is fixed when it starts: as loaded, whatever the lock read.
    const rows = loaded[i]!.map((c) => ({ ...(fresh.get(c.id) ?? c), account: c.account ?? null }));
    // Only the brand's payments of the SMS's mode can be proved by it; a claimer of the other mode is a conflict for a person.
    // Numbers (declared at checkout, else the customer's phone) are decrypted only when the SMS names a payer, or
    // for a claimer; each payment is checked against its own gateway's review threshold.
    const reviewAboveOf = (gatewayId: number) => gateways.find((g) => g.id === gatewayId)?.reviewAbove ?? null;
    const own = rows
      .filter((c) => c.brandId === rec.brandId && c.mode === rec.mode)
      .map((c) => {
        const checked = { ...c, reviewAbove: reviewAboveOf(c.gatewayId) };
        if (!claimsOf(c, i) && reading.parsed.senderNumber === null) return checked;
        const payerNumber = payerNumberOf(cipher, c, customerPhones);
        return payerNumber === null ? checked : { ...checked, payerNumber };
      });
    const foreign = rows.filter((c) => !(c.brandId === rec.brandId && c.mode === rec.mode));
    const result = chooseMatch({
      sms: {
        amount: reading.parsed.amount, trxId, senderNumber: reading.parsed.senderNumber, time: rec.smsTime, chainState: verdict.state, trxIdContradicted: contradicted.has(trxId),
        statedAt: reading.parsed.statedAt, arrival: { deviceId: rec.deviceId, simSlot: rec.simSlot, receivingNumber: rec.receivingNumber },
      },
      candidates: own,
      rules: { windowMinutes: settings.windowMinutes, graceSeconds: settings.graceSeconds, reviewAbove: null },
    });
    const gatewayId = result.transactionId !== null ? own.find((c) => c.id === result.transactionId)!.gatewayId : reading.gatewayIds[0]!;
    if (foreign.length > 0 && result.status !== 'duplicate') {
      // The unique gateway trx id forbids completing ours; a human must look at both.
      return outcomeOf(reading, {
        status: 'low_confidence',
        transactionId: null,
        confidence: 0,
        candidateIds: [...result.candidateIds, ...foreign.map((c) => c.id)],
        reason: `gateway trx id ${trxId} is claimed by transaction ${foreign.map((c) => c.id).join(', ')} ${foreign.every((c) => c.brandId === rec.brandId) ? 'of the other mode' : 'of another brand'}`,
        reasonCode: foreign.every((c) => c.brandId === rec.brandId) ? 'claimed_in_other_mode' : 'claimed_by_other_brand',
        suggestions: result.suggestions,
      }, gatewayId, chain);
    }
    return outcomeOf(reading, result, gatewayId, chain);
  });
  return { outcome: outcomes.find((o) => o.status !== 'no_candidate') ?? outcomes[0]!, locked: fresh };
}

/** `provedBy`: the records of this batch that completed a transaction (by transaction id), not stored yet. */
async function explainDuplicate(tx: Db, o: SmsOutcome, provedBy?: ReadonlyMap<number, number>): Promise<SmsOutcome> {
  const inBatch = provedBy?.get(o.candidateIds[0] ?? 0);
  if (inBatch !== undefined) return { ...o, reason: `${o.reason} (proved by SMS record ${inBatch})` };
  const earlier = await recordThatProved(tx, o.candidateIds[0] ?? 0);
  return earlier !== undefined ? { ...o, reason: `${o.reason} (proved by SMS record ${earlier})` } : o;
}

/**
 * Completes the decided transaction on its own, in a savepoint, when its write
 * can be refused: the SMS's trx id is stored on a transaction that had none
 * (the unique index on the gateway trx id, against a customer submitting it
 * elsewhere meanwhile), or it was not among the rows decide() locked. It was
 * locked open a moment ago, so a refusal here means an invariant broke
 * elsewhere; the SMS then waits for review instead of failing the whole batch.
 * Returns the completed transaction's service trx id with the outcome.
 */
async function completeAlone(
  tx: Db,
  o: SmsOutcome,
  row: LockedCandidate['record'] | undefined,
): Promise<{ outcome: SmsOutcome; trxId: string | null; transaction?: LockedCandidate['record'] }> {
  const gatewayTrxId = o.parsed!.trxId!;
  try {
    const { changed, transaction: completed } = !row
      ? await completeTransaction(tx, o.transactionId!, { source: 'sms', gatewayTrxId })
      : (await transaction(tx, (sp) => completeLockedTransactions(sp, [{ t: row, gatewayTrxId }], 'sms')))[0]!;
    if (changed) return { outcome: o, trxId: completed.trxId, transaction: completed };
    return { outcome: alreadyCompleted(o), trxId: null };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { outcome: completionRefused(o, err), trxId: null };
  }
}

function alreadyCompleted(o: SmsOutcome): SmsOutcome {
  return { ...o, status: 'low_confidence', transactionId: null, confidence: 0, reason: `transaction ${o.transactionId} was already completed`, reasonCode: 'completion_refused' };
}

function completionRefused(o: SmsOutcome, err: AppError): SmsOutcome {
  return { ...o, status: 'low_confidence', transactionId: null, confidence: 0, reason: `${o.reason}; completing transaction ${o.transactionId} was refused: ${err.message}`, reasonCode: 'completion_refused' };
}

/**
 * Matches one `pending` record: a batch of one (matchBatch). Returns its
 * outcome, or null when the record is not pending (already decided, or being
 * decided by another process). `settings` given: those (a sweep reads them
 * once per run); else the ones stored now, read with the record.
 */
export async function matchSmsRecord(em: Db, deps: SmsMatchDeps, recordId: number, settings?: MatchSettings): Promise<SmsOutcome | null> {
  return (await matchBatch(em, deps, [recordId], settings)).get(recordId)?.outcome ?? null;
}

/**
 * Decides the pending ones among `recordIds` in one database transaction, in
 * the order given: claims them (one statement, which reads the gateways and
 * settings too), then takes the reads and locks of all of them together
 * (batch-reads.ts), a constant number of statements for any size, then decides
 * each record exactly as it would be decided right after the ones before it
 * committed: the rules, the lock order and the order of decisions are the
 * same. Then the writes, set-based: every completion in one statement with its
 * events (completeLockedTransactions), every outcome in one, the chains' heads.
 * Returns the decided records; throws (and rolls back all of them) on any
 * error, after which the caller may match them as batches of one.
 */
async function matchBatch(
  em: Db,
  deps: SmsMatchDeps,
  recordIds: readonly number[],
  givenSettings?: MatchSettings,
): Promise<Map<number, { outcome: SmsOutcome; trxId: string | null }>> {
  return transaction(em, async (tx) => {
    const claimed = await claimPendingRecords(tx, recordIds, settingKeys, deps.cipher);
    const result = new Map<number, { outcome: SmsOutcome; trxId: string | null }>();
    if (claimed.length === 0) return result;
    const byId = new Map(claimed.map((r) => [r.id, r]));
    // In the order given (intake: by SMS time), as they would be decided one by one.
    const recs = recordIds.filter((id, i) => byId.has(id) && recordIds.indexOf(id) === i).map((id) => byId.get(id)!);
    // Every record of the batch was claimed by the same statement: one reading of the gateways and settings.
    const gateways = recs[0]!.gateways.map(toGatewaySmsConfig);
    const settings = givenSettings ?? matchSettingsOf(effectiveSettings(recs[0]!.settings));
    const bodies = new Map(recs.map((r) => [r.id, deps.cipher.decrypt(r.bodyEncrypted, SMS_BODY_CONTEXT, r.binding)]));
    const batch = await batchReads(tx, deps.cipher, recs.map((r) => planRecord(r, bodies.get(r.id)!, gateways, settings)));
    const provedBy = new Map<number, number>();
    const completions: Array<{ t: LockedCandidate['record']; gatewayTrxId: string }> = [];
    const stored: Array<{ rec: PendingSmsRecord; outcome: SmsOutcome }> = [];
    for (const rec of recs) {
      const decided = await decide(batch.io, rec, bodies.get(rec.id)!, gateways, settings, deps.cipher);
      let outcome = decided.outcome;
      let trxId: string | null = null;
      const row = outcome.status === 'matched' ? decided.locked.get(outcome.transactionId!)?.record : undefined;
      if (row && row.gatewayTrxId !== null) {
        // Decided now, written with the batch's other completions after the loop (completeLockedTransactions):
        // every refusal comes before the write, on the row as locked; the write itself cannot be refused here,
        // as the row already carries its gateway trx id (else it completes below, on its own, in a savepoint).
        let refusal: 'already_completed' | null = null;
        try {
          refusal = completionRefusal(row, outcome.parsed!.trxId!);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          outcome = completionRefused(outcome, err);
        }
        if (refusal === 'already_completed') outcome = alreadyCompleted(outcome);
        else if (outcome.status === 'matched') {
          completions.push({ t: row, gatewayTrxId: outcome.parsed!.trxId! });
          trxId = row.trxId;
          batch.completed({ ...row, status: 'completed' });
          provedBy.set(row.id, rec.id);
        }
      } else if (outcome.status === 'matched') {
        const done = await completeAlone(tx, outcome, row);
        ({ outcome, trxId } = done);
        if (done.transaction) {
          batch.completed(done.transaction);
          provedBy.set(done.transaction.id, rec.id);
        }
      }
      if (outcome.status === 'duplicate') outcome = await explainDuplicate(tx, outcome, provedBy);
      batch.decided(rec.id, outcome);
      stored.push({ rec, outcome });
      result.set(rec.id, { outcome, trxId });
    }
    await completeLockedTransactions(tx, completions, 'sms');
    await storeOutcomes(tx, deps.cipher, stored);
    await batch.writeHeads();
    // After the outcomes are stored: a chain break's previous link may be a record of this batch.
    // A missed SMS is the usual cause of a break: ask the phone to re-send the gap (docs/recovery.md).
    for (const { rec, outcome } of stored) {
      if (outcome.chain?.state === 'mismatch' && outcome.chain.previousId !== null) {
        await requestBackfillForChainBreak(tx, { deviceId: rec.deviceId, previousId: outcome.chain.previousId, smsTime: outcome.chain.smsTime });
      }
    }
    return result;
  });
}

/**
 * The intake seam (sms/intake/matching-seam.ts): matches the new records in
 * the order given (intake: by SMS time) as one batch (matchBatch). Should the
 * batch fail as a whole (a deadlock, a broken invariant, or an SMS that
 * repairs its chain, batch-reads.ts), nothing of it is kept and each record is
 * matched again as a batch of one, so one record failing does not stop the
 * others; the first error is rethrown so intake reports it (that record stays
 * `pending` for the sweep).
 */
export function createSmsMatcher(deps: SmsMatchDeps & { onBatchError?: (err: unknown) => void }): MatchSmsRecords {
  return async (em, recordIds) => {
    // What each committed decision stored, so that intake need not read it back (BENCHMARKS.md).
    const decided = new Map<number, MatchedRecordState>();
    // A `matched` outcome always carries its trx id; anything else unexpected is left for intake to read.
    const answer = (id: number, r: { outcome: SmsOutcome; trxId: string | null } | null) => {
      if (r && (r.outcome.status === 'matched') === (r.trxId !== null)) decided.set(id, { matchStatus: r.outcome.status, trxId: r.trxId });
    };
    try {
      const results = await matchBatch(em, deps, recordIds);
      for (const [id, r] of results) answer(id, r);
      return decided;
    } catch (err) {
      // Rolled back: every record is still pending; decided as batches of one below, each error on its own. A
      // chain repair is no error: a larger batch leaves it to batches of one by design (batch-reads.ts).
      if (!(err instanceof ChainRepairInBatch)) deps.onBatchError?.(err);
    }
    let firstError: unknown = null;
    // In the order given: intake passes them by SMS time, so a batch's balances chain in the order they happened.
    for (const id of recordIds) {
      try {
        answer(id, (await matchBatch(em, deps, [id])).get(id) ?? null);
      } catch (err) {
        firstError ??= err;
      }
    }
    if (firstError !== null) throw firstError;
    return decided;
  };
}
