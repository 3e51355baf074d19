import { AppError } from '../../../../contract/common/errors.ts';
import { compareMoney } from '../../money/decimal.ts';
import { OPEN_TRANSACTION_STATUSES } from '../../payments/entities.ts';
import { lockGatewayTrxIds } from './gateway-trx-lock.ts';
import { completeTransaction, correctLockedGatewayTrxId, failTransaction, getTransaction, type TransactionRecord } from '../../payments/transactions.ts';
import { idDistance, MAX_SUGGESTED_DISTANCE } from './typo.ts';
import { gatewaysSharingSenders, loadGatewaySmsConfigs } from './candidates.ts';
import { evidenceRecord, markRejectedWith, markVerified } from './queries/records.ts';
import { lockTransactionRow, releaseClaimOfFailed } from '../../payments/queries/transactions.ts';
import { transaction, type Db } from '../../db.ts';

/**
 * An admin's decisions on transactions the matcher left for review
 * (`low_confidence`, `no_candidate`, or no SMS at all). Both are conditional on
 * the transaction still being open, take the locks in the global order (gateway
 * trx ids, intent, transaction, SMS records), and record who decided on the SMS
 * records concerned. The admin API wraps them in its audit log.
 */

export const MAX_ACTOR_LENGTH = 100;

/**
 * Records left for a person (docs/matching.md): an admin may name one as the
 * proof of a payment after looking at it; a `balance_mismatch` too (the admin
 * can see a missed SMS in the phone's inbox, which the service cannot).
 */
const REVIEWABLE = ['no_candidate', 'low_confidence', 'balance_mismatch'] as const;
export const MAX_NOTE_LENGTH = 500;

/** A person's free text (note, reason): trimmed, refused when required and empty or longer than `max`; null when empty and optional. */
export function text(value: string | null | undefined, field: string, opts: { required: boolean; max: number }): string | null {
  const v = (value ?? '').trim();
  if (v === '') {
    if (opts.required) throw new AppError('VALIDATION_ERROR', 'Must not be empty', { field });
    return null;
  }
  if (v.length > opts.max) throw new AppError('VALIDATION_ERROR', `Must be at most ${opts.max} characters`, { field });
  return v;
}

async function lockOpen(tx: Db, transactionId: number, extraTrxIds: Array<string | null>, verb: string): Promise<TransactionRecord> {
  const before = await getTransaction(tx, transactionId);
  await lockGatewayTrxIds(tx, [before.gatewayTrxId, ...extraTrxIds]);
  // The intent, then the transaction, as every state change of a payment locks them.
  await lockTransactionRow(tx, transactionId);
  const t = await getTransaction(tx, transactionId);
  if (!(OPEN_TRANSACTION_STATUSES as readonly string[]).includes(t.status)) {
    throw new AppError('INVALID_STATE', `Transaction is ${t.status}; only a pending, processing or awaiting_verification transaction can be ${verb}`);
  }
  return t;
}

type EvidenceRow = Awaited<ReturnType<typeof readEvidence>>;

async function readEvidence(tx: Db, smsRecordId: number, brandId: number, lock: boolean) {
  const row = await evidenceRecord(tx, { id: smsRecordId, brandId, lock });
  // Another brand's record is answered like a missing one.
  if (!row) throw new AppError('SMS_RECORD_NOT_FOUND', undefined, { field: 'sms_record_id' });
  return row;
}

/**
 * The SMS must be parsed, still unmatched, and say what the transaction says.
 * `acceptAmountDifference`: a person accepts an SMS whose amount differs (the
 * customer sent a little more or less); mode, gateway and trx id must still agree.
 * `correctTrxId`: a person says the customer mistyped the id; allowed only when
 * the claimed id is within the typo distance the review screen suggests by
 * (typo.ts), so a person cannot hand one customer's SMS to an unrelated claim.
 * Returns the SMS's trx id and whether the claim is corrected to it.
 */
async function checkEvidence(
  tx: Db,
  sms: EvidenceRow,
  t: TransactionRecord,
  opts: { acceptAmountDifference: boolean; correctTrxId: boolean },
): Promise<{ trxId: string; corrected: boolean }> {
  if (!(REVIEWABLE as readonly string[]).includes(sms.match_status)) {
    throw new AppError('INVALID_STATE', `SMS record ${sms.id} is ${sms.match_status}; only a no_candidate, low_confidence or balance_mismatch record can prove a transaction`, {
      field: 'sms_record_id',
    });
  }
  const trxId = sms.parsed_trx_id!;
  const mismatch = (message: string) => new AppError('SMS_EVIDENCE_MISMATCH', message, { field: 'sms_record_id' });
  // A test phone's SMS never proves a live payment, nor a live phone's a test one: not even by an admin's hand.
  if (sms.mode !== t.mode) throw mismatch(`SMS record ${sms.id} was forwarded by a ${sms.mode}-mode device; transaction ${t.id} is ${t.mode} mode`);
  if (sms.gateway_id === null || !gatewaysSharingSenders(await loadGatewaySmsConfigs(tx), t.gatewayId).includes(sms.gateway_id)) {
    throw mismatch(`SMS record ${sms.id} comes from another gateway's sender than transaction ${t.id}`);
  }
  if (!opts.acceptAmountDifference && compareMoney(sms.parsed_amount!, t.amount) !== 0) {
    throw mismatch(`SMS record ${sms.id} says amount ${sms.parsed_amount}, transaction ${t.id} is ${t.amount}`);
  }
  const differs = t.gatewayTrxId !== null && t.gatewayTrxId.trim().toUpperCase() !== trxId.toUpperCase();
  if (opts.correctTrxId) {
    // Nothing to correct: the flag would put a correction on record that never happened.
    if (!differs) throw new AppError('VALIDATION_ERROR', `Transaction ${t.id} claims ${t.gatewayTrxId ?? 'no id'}: there is no mistyped id to correct`, { field: 'correct_trx_id' });
    const distance = idDistance(t.gatewayTrxId!, trxId);
    if (distance > MAX_SUGGESTED_DISTANCE) {
      throw mismatch(`SMS record ${sms.id} carries gateway trx id ${trxId}, ${distance} edits from ${t.gatewayTrxId} claimed by transaction ${t.id}: more than a typo (at most ${MAX_SUGGESTED_DISTANCE})`);
    }
    return { trxId, corrected: true };
  }
  if (differs) {
    throw mismatch(`SMS record ${sms.id} carries gateway trx id ${trxId}, transaction ${t.id} carries ${t.gatewayTrxId}`);
  }
  return { trxId, corrected: false };
}

export interface ManualVerification {
  transaction: TransactionRecord;
  /** The SMS record now `matched` to the transaction, when one was named. */
  smsRecordId: number | null;
  /** The amount the named SMS says, when it differs from the transaction's (accepted by the person verifying). */
  smsAmountAccepted: string | null;
  /** The id the customer claimed, when the person verifying corrected it to the SMS's (`correctTrxId`). */
  correctedFromTrxId: string | null;
  /** The note, trimmed (null when none was given). */
  note: string | null;
}

/**
 * Completes an open transaction on an admin's word (`payment.completed` is
 * recorded with it), optionally naming the SMS record that proves it: that
 * record becomes `matched` and the transaction takes its gateway trx id.
 * Errors: TRANSACTION_NOT_FOUND; SMS_RECORD_NOT_FOUND (also another brand's);
 * INVALID_STATE (transaction not open, SMS not no_candidate/low_confidence/balance_mismatch);
 * SMS_EVIDENCE_MISMATCH (other amount, trx id or gateway; with `correctTrxId`,
 * an id further than a typo from the claim);
 * GATEWAY_TRX_ID_TAKEN (the SMS's trx id completed or is claimed by another
 * transaction); VALIDATION_ERROR (actor, note, a flag without the SMS or the
 * note it needs, `correctTrxId` with nothing to correct).
 */
export async function verifyTransactionManually(
  em: Db,
  input: { transactionId: number; smsRecordId?: number | null; actor: string; note?: string | null; acceptAmountDifference?: boolean; correctTrxId?: boolean },
): Promise<ManualVerification> {
  const actor = text(input.actor, 'actor', { required: true, max: MAX_ACTOR_LENGTH })!;
  const acceptAmountDifference = input.acceptAmountDifference === true;
  const correctTrxId = input.correctTrxId === true;
  // Accepting a different amount or correcting a claimed id is a person's decision: it must say why, and name the SMS.
  const note = text(input.note, 'note', { required: acceptAmountDifference || correctTrxId, max: MAX_NOTE_LENGTH });
  const smsRecordId = input.smsRecordId ?? null;
  if (acceptAmountDifference && smsRecordId === null) throw new AppError('VALIDATION_ERROR', 'accept_amount_difference needs sms_record_id', { field: 'sms_record_id' });
  if (correctTrxId && smsRecordId === null) throw new AppError('VALIDATION_ERROR', 'correct_trx_id needs sms_record_id', { field: 'sms_record_id' });
  return transaction(em, async (tx) => {
    const { brandId } = await getTransaction(tx, input.transactionId);
    const unlocked = smsRecordId === null ? null : await readEvidence(tx, smsRecordId, brandId, false);
    const t = await lockOpen(tx, input.transactionId, [unlocked?.parsed_trx_id ?? null], 'verified');
    const evidence = unlocked === null ? null : await readEvidence(tx, smsRecordId!, brandId, true);
    const checked = evidence === null ? null : await checkEvidence(tx, evidence, t, { acceptAmountDifference, correctTrxId });
    const trxId = checked?.trxId ?? null;
    const smsAmountAccepted = evidence !== null && compareMoney(evidence.parsed_amount!, t.amount) !== 0 ? evidence.parsed_amount : null;
    // Both ids are locked (lockOpen): the claimed one is released and the SMS's taken in this transaction.
    if (checked?.corrected) await correctLockedGatewayTrxId(tx, t, checked.trxId);

    await completeTransaction(tx, t.id, { source: 'admin', gatewayTrxId: trxId });
    if (smsRecordId !== null) {
      await markVerified(tx, smsRecordId, { transactionId: t.id, actor, note });
    }
    return { transaction: await getTransaction(tx, t.id), smsRecordId, smsAmountAccepted, correctedFromTrxId: checked?.corrected ? t.gatewayTrxId : null, note };
  });
}

export interface Rejection {
  transaction: TransactionRecord;
  /** Unmatched SMS records whose only candidate was this transaction: now resolved as `rejected`. */
  resolvedSmsRecordIds: number[];
  /** The gateway trx id the transaction claimed, released so its real owner can still use it. */
  releasedGatewayTrxId: string | null;
}

/**
 * Fails an open transaction on an admin's word (`payment.failed` is recorded
 * with it). Its gateway trx id is released: a rejected claim (often a mistyped
 * or borrowed id) must not keep the genuine payment from being matched; the
 * event, the result and the admin audit log keep it. SMS records left for
 * review with this transaction as their only candidate are marked resolved.
 * Errors: TRANSACTION_NOT_FOUND, INVALID_STATE (not open), VALIDATION_ERROR.
 */
export async function rejectTransaction(em: Db, input: { transactionId: number; actor: string; reason: string }): Promise<Rejection> {
  const actor = text(input.actor, 'actor', { required: true, max: MAX_ACTOR_LENGTH })!;
  const reason = text(input.reason, 'reason', { required: true, max: MAX_NOTE_LENGTH })!;
  return transaction(em, async (tx) => {
    const t = await lockOpen(tx, input.transactionId, [], 'rejected');
    await failTransaction(tx, t.id, { reason });
    if (t.gatewayTrxId !== null) {
      await releaseClaimOfFailed(tx, t.id);
    }
    const resolved = await markRejectedWith(tx, { brandId: t.brandId, transactionId: t.id, actor, reason });
    return {
      transaction: await getTransaction(tx, t.id),
      resolvedSmsRecordIds: resolved.sort((a, b) => a - b),
      releasedGatewayTrxId: t.gatewayTrxId,
    };
  });
}
