import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { compareMoney } from '../money/decimal.ts';
import { completeLockedTransaction, completeTransaction } from '../payments/transactions.ts';
import { effectiveSettings, getSettings, settingKeys, type Settings } from '../settings/service.ts';
import type { MatchedRecordState, MatchSmsRecords } from '../sms-intake/matching-seam.ts';
import { lockGatewayTrxIds } from './gateway-trx-lock.ts';
import { isOfficialSender, loadCandidates, lockOpenCandidates, toGatewaySmsConfig, type CandidateRow, type GatewaySmsConfig, type LockedCandidate } from './candidates.ts';
import { chooseMatch, type MatchResult } from './matcher.ts';
import { parseSms, type ParsedSms } from './parser.ts';
import { claimPendingRecord, SMS_BODY_CONTEXT, storeOutcome, type PendingSmsRecord, type SmsOutcome } from './records.ts';

/**
 * Applies the pure matcher (design.md "Matching a forwarded SMS") to stored
 * SMS records: one database transaction per record, in which the record is
 * decided, the transaction it proves is completed (with its
 * `payment.completed` event) and the record is marked `matched`, or none of it.
 */

export interface MatchSettings {
  threshold: number;
  windowMinutes: number;
}

export async function loadMatchSettings(em: EntityManager): Promise<MatchSettings> {
  return matchSettingsOf(await getSettings(em));
}

function matchSettingsOf(s: Settings): MatchSettings {
  return { threshold: s.match_threshold, windowMinutes: s.match_window_minutes };
}

export interface SmsMatchDeps {
  cipher: PiiCipher;
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
    const same = out.find((r) => r.parsed.trxId === parsed.trxId && compareMoney(r.parsed.amount, parsed.amount) === 0);
    if (same) same.gatewayIds.push(g.id);
    else out.push({ parsed, gatewayIds: [g.id] });
  }
  return out;
}

function noMatch(reason: string): SmsOutcome {
  return { status: 'no_match', gatewayId: null, parsed: null, transactionId: null, confidence: 0, candidateIds: [], reason };
}

function outcomeOf(reading: Reading, r: MatchResult, gatewayId: number): SmsOutcome {
  const { amount, trxId, senderNumber } = reading.parsed;
  return {
    status: r.status,
    gatewayId,
    parsed: { amount, trxId, senderNumber },
    transactionId: r.transactionId,
    confidence: r.confidence,
    candidateIds: r.candidateIds,
    reason: r.reason,
  };
}

/**
 * Decides among the candidates of every reading (normally exactly one). Takes
 * the locks in the global order: gateway trx ids, then intents and
 * transactions; decisions are made on the rows as they are once locked.
 */
async function decide(
  tx: EntityManager,
  rec: PendingSmsRecord,
  body: string,
  gateways: readonly GatewaySmsConfig[],
  settings: MatchSettings,
): Promise<{ outcome: SmsOutcome; locked: ReadonlyMap<number, LockedCandidate> }> {
  const none = new Map<number, LockedCandidate>();
  const official = gateways.filter((g) => isOfficialSender(g, rec.sender));
  if (official.length === 0) return { outcome: noMatch('the sender is not an official SMS sender of any gateway'), locked: none };
  const all = readings({ sender: rec.sender, body }, official);
  if (all.length === 0) return { outcome: noMatch(`no SMS template of gateway ${official.map((g) => g.code).join(', ')} matched the message`), locked: none };

  await lockGatewayTrxIds(tx, all.map((r) => r.parsed.trxId));
  const loaded: CandidateRow[][] = [];
  for (const r of all) {
    loaded.push(await loadCandidates(tx, { brandId: rec.brandId, mode: rec.mode, gatewayIds: r.gatewayIds, trxId: r.parsed.trxId, amount: r.parsed.amount, smsTime: rec.smsTime, windowMinutes: settings.windowMinutes }));
  }
  // Every loaded row can decide the outcome (a claimer of the trx id, or open with the exact amount): lock the open ones.
  const fresh = await lockOpenCandidates(tx, loaded.flat());

  const outcomes = all.map((reading, i) => {
    const rows = loaded[i]!.map((c) => fresh.get(c.id) ?? c);
    // Only the brand's payments of the SMS's mode can be proved by it; a claimer of the other mode is a conflict for a person.
    const own = rows.filter((c) => c.brandId === rec.brandId && c.mode === rec.mode);
    const foreign = rows.filter((c) => !own.includes(c));
    const result = chooseMatch({ parsed: reading.parsed, smsReceivedAt: rec.smsTime, candidates: own, windowMinutes: settings.windowMinutes, threshold: settings.threshold });
    const gatewayId = result.transactionId !== null ? own.find((c) => c.id === result.transactionId)!.gatewayId : reading.gatewayIds[0]!;
    if (foreign.length > 0 && result.status !== 'duplicate') {
      // The unique gateway trx id forbids completing ours; a human must look at both.
      return outcomeOf(reading, {
        status: 'low_confidence',
        transactionId: null,
        confidence: 0,
        candidateIds: [...result.candidateIds, ...foreign.map((c) => c.id)],
        reason: `gateway trx id ${reading.parsed.trxId} is claimed by transaction ${foreign.map((c) => c.id).join(', ')} ${foreign.every((c) => c.brandId === rec.brandId) ? 'of the other mode' : 'of another brand'}`,
      }, gatewayId);
    }
    return outcomeOf(reading, result, gatewayId);
  });
  return { outcome: outcomes.find((o) => o.status !== 'no_candidate') ?? outcomes[0]!, locked: fresh };
}

async function explainDuplicate(tx: EntityManager, o: SmsOutcome): Promise<SmsOutcome> {
  const [earlier] = await tx.execute<Array<{ id: string }>>(
    `SELECT id FROM sms_records WHERE transaction_id = ? AND match_status = 'matched'`,
    [o.candidateIds[0] ?? 0],
  );
  return earlier ? { ...o, reason: `${o.reason} (proved by SMS record ${earlier.id})` } : o;
}

/**
 * Completes the decided transaction. It was locked open a moment ago, so a
 * refusal here means an invariant broke elsewhere; the SMS then waits for
 * review instead of failing the whole batch.
 *
 * decide() already holds the intent and transaction locks and read the row
 * under them, so the completion joins this transaction with that row
 * (completeLockedTransaction) instead of locking and reading it again inside a
 * savepoint: up to four round trips per matched SMS before (BENCHMARKS.md). Its
 * refusals all come before its first write, so no savepoint is needed for
 * them; the savepoint stays only where a write can be refused, i.e. when the
 * SMS's trx id is stored on a transaction that had none (the unique index on
 * the gateway trx id, against a customer submitting it elsewhere meanwhile).
 * Returns the completed transaction's service trx id with the outcome.
 */
async function complete(tx: EntityManager, o: SmsOutcome, locked: ReadonlyMap<number, LockedCandidate>): Promise<{ outcome: SmsOutcome; trxId: string | null }> {
  const opts = { source: 'sms', gatewayTrxId: o.parsed!.trxId } as const;
  const row = locked.get(o.transactionId!)?.record;
  try {
    const { changed, transaction } = !row
      ? await completeTransaction(tx, o.transactionId!, opts)
      : row.gatewayTrxId === null
        ? await tx.transactional((sp) => completeLockedTransaction(sp, row, opts))
        : await completeLockedTransaction(tx, row, opts);
    if (changed) return { outcome: o, trxId: transaction.trxId };
    return { outcome: { ...o, status: 'low_confidence', transactionId: null, confidence: 0, reason: `transaction ${o.transactionId} was already completed` }, trxId: null };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return {
      outcome: { ...o, status: 'low_confidence', transactionId: null, confidence: 0, reason: `${o.reason}; completing transaction ${o.transactionId} was refused: ${err.message}` },
      trxId: null,
    };
  }
}

/**
 * Matches one `pending` record. Returns its outcome, or null when the record
 * is not pending (already decided, or being decided by another process).
 * `settings` given: those (a sweep reads them once per run); else the ones
 * stored now, read with the record.
 */
export async function matchSmsRecord(em: EntityManager, deps: SmsMatchDeps, recordId: number, settings?: MatchSettings): Promise<SmsOutcome | null> {
  return (await matchRecord(em, deps, recordId, settings))?.outcome ?? null;
}

/** matchSmsRecord, also answering the service trx id of the transaction a `matched` outcome completed. */
async function matchRecord(em: EntityManager, deps: SmsMatchDeps, recordId: number, settings?: MatchSettings): Promise<{ outcome: SmsOutcome; trxId: string | null } | null> {
  return em.transactional(async (tx) => {
    // The gateways and settings come with the record: one statement instead of three (BENCHMARKS.md).
    const rec = await claimPendingRecord(tx, recordId, settingKeys, deps.cipher);
    if (!rec) return null;
    const body = deps.cipher.decrypt(rec.bodyEncrypted, SMS_BODY_CONTEXT, rec.binding);
    const s = settings ?? matchSettingsOf(effectiveSettings(rec.settings));
    const decided = await decide(tx, rec, body, rec.gateways.map(toGatewaySmsConfig), s);
    let outcome = decided.outcome;
    let trxId: string | null = null;
    if (outcome.status === 'matched') ({ outcome, trxId } = await complete(tx, outcome, decided.locked));
    if (outcome.status === 'duplicate') outcome = await explainDuplicate(tx, outcome);
    await storeOutcome(tx, deps.cipher, rec, outcome);
    return { outcome, trxId };
  });
}

/**
 * The intake seam (sms-intake/matching-seam.ts): matches each new record in
 * id order, each in its own transaction. One record failing does not stop the
 * others; the first error is rethrown so intake reports it (that record stays
 * `pending` for the sweep).
 */
export function createSmsMatcher(deps: SmsMatchDeps): MatchSmsRecords {
  return async (em, recordIds) => {
    let firstError: unknown = null;
    // What each committed decision stored, so that intake need not read it back (BENCHMARKS.md).
    const decided = new Map<number, MatchedRecordState>();
    for (const id of [...recordIds].sort((a, b) => a - b)) {
      try {
        const r = await matchRecord(em, deps, id);
        // A `matched` outcome always carries its trx id; anything else unexpected is left for intake to read.
        if (r && (r.outcome.status === 'matched') === (r.trxId !== null)) decided.set(id, { matchStatus: r.outcome.status, trxId: r.trxId });
      } catch (err) {
        firstError ??= err;
      }
    }
    if (firstError !== null) throw firstError;
    return decided;
  };
}
