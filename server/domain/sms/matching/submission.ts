import { AppError } from '../../../../contract/common/errors.ts';
import { askPhonesForSubmission } from '../../recovery/backfill.ts';
import { lockGatewayTrxIds } from './gateway-trx-lock.ts';
import { completeTransaction, getTransaction } from '../../payments/transactions.ts';
import { gatewaysSharingSenders, loadCandidates, loadGatewaySmsConfigs, type CandidateRow } from './candidates.ts';
import { CERTAIN_CONFIDENCE, matchSubmittedTrxId, OPEN_STATUSES, type MatchStatus } from './matcher.ts';
import type { Mode } from '../../../../contract/vocabulary.ts';
import { transaction, type Db } from '../../db.ts';
import type { PiiCipher } from '../../../infra/crypto/pii-cipher.ts';
import { lockEvidenceByTrxId, markMatchedBySubmission, sendToReviewWith, SMS_SENDER_NUMBER_CONTEXT } from './queries/records.ts';
import { claimantOf } from './queries/candidates.ts';
import { lockTransactionRow } from '../../payments/queries/transactions.ts';
import { customerPhonesOfCandidates, customerPhonesOfIntents } from './expected-payer.ts';
import { candidateQueryOf, declaredPayerNumber, loadMatchSettings, payerNumberOf, type MatchSettings } from './service.ts';

export interface SubmissionMatch {
  /** `matched`: the transaction is now completed by `smsRecordId`. Anything else: it still awaits its SMS. */
  status: MatchStatus;
  smsRecordId: number | null;
  reason: string;
}

/**
 * The open payments, other than `t`, that an unclaimed SMS of the evidence could also be for (its amount,
 * its gateways, within the window) with their payer numbers in clear: declared at checkout, else their
 * customer's phone. Read, not locked: they only keep `t` from completing.
 */
async function otherOpenPayersOf(
  tx: Db,
  cipher: PiiCipher,
  t: { id: number; brandId: number; mode: Mode },
  gatewayIds: readonly number[],
  evidence: ReadonlyArray<{ trxId: string; amount: string; smsTime: Date; senderNumberEncrypted: string | null; matchStatus: MatchStatus }>,
  s: MatchSettings,
): Promise<Array<{ id: number; payerNumber: string }>> {
  const rows: CandidateRow[] = [];
  for (const e of evidence) {
    if (e.senderNumberEncrypted === null || (e.matchStatus !== 'no_candidate' && e.matchStatus !== 'low_confidence')) continue;
    const found = await loadCandidates(tx, candidateQueryOf({ brandId: t.brandId, mode: t.mode, gatewayIds, trxId: e.trxId, amount: e.amount, smsTime: e.smsTime }, s));
    rows.push(...found.filter((c) => c.id !== t.id && OPEN_STATUSES.includes(c.status) && c.gatewayTrxId?.toUpperCase() !== e.trxId));
  }
  const phones = await customerPhonesOfCandidates(tx, cipher, rows.filter((c) => !c.payerNumberEncrypted));
  return rows.flatMap((c) => {
    const payerNumber = payerNumberOf(cipher, c, phones);
    return payerNumber === null ? [] : [{ id: c.id, payerNumber }];
  });
}

/**
 * docs/matching.md, "Order does not matter": the other order: the customer has just given the gateway
 * trx id of a manual-gateway transaction, and an SMS stored earlier may
 * already prove it. Call it once the submission has committed (the checkout's
 * seam, checkout/manual-submission-seam.ts, does): inside the submission's own
 * transaction the intent and transaction would already be locked ahead of the
 * trx id lock, against the global order.
 *
 * Takes the same locks in the same order as SMS intake (the trx id's advisory
 * lock, the intent, the transaction, then the SMS records), so an SMS arriving
 * at the same moment is matched by exactly one of the two directions. When the
 * stored SMS contradicts the submission (other amount, older than the
 * payment), the SMS record is moved to `low_confidence` naming this
 * transaction, for an admin to review; nothing is completed.
 */
export async function matchSubmittedGatewayTrxId(
  em: Db,
  transactionId: number,
  settings?: MatchSettings,
  cipher?: PiiCipher,
): Promise<SubmissionMatch> {
  const s = settings ?? (await loadMatchSettings(em));
  return transaction(em, async (tx) => {
    const before = await getTransaction(tx, transactionId);
    if (before.gatewayTrxId === null || before.gatewayType !== 'manual') {
      return { status: 'no_candidate', smsRecordId: null, reason: 'the transaction has no gateway trx id to match on a manual gateway' };
    }
    await lockGatewayTrxIds(tx, [before.gatewayTrxId]);
    // The intent, then the transaction, as every state change of a payment locks them.
    await lockTransactionRow(tx, transactionId);
    const t = await getTransaction(tx, transactionId);
    // The timing rule compares the SMS with the payment's creation (see candidates.ts).
    const intent = await claimantOf(tx, t.id);
    const configs = await loadGatewaySmsConfigs(tx);
    const gatewayIds = gatewaysSharingSenders(configs, t.gatewayId);
    const evidence = await lockEvidenceByTrxId(tx, t.brandId, t.mode, gatewayIds, t.gatewayTrxId!);
    const declared = intent.payer;
    // Without a number declared at checkout, the payment's customer phone is the number the SMS's payer must agree with.
    const expected = declared ?? intent.customer_phone;
    // A claim naming no payer at all: the other open payments whose customer the SMS's payer may be.
    const otherOpenPayers = expected === null && cipher ? await otherOpenPayersOf(tx, cipher, t, gatewayIds, evidence, s) : [];
    const compareNumbers = expected !== null || otherOpenPayers.length > 0;
    // Numbers are compared only when both sides have one; without the cipher that comparison cannot be made, so nothing completes.
    if (expected !== null && !cipher && evidence.some((e) => e.senderNumberEncrypted !== null)) {
      return { status: 'low_confidence', smsRecordId: null, reason: 'the payer numbers cannot be compared here; the SMS waits for review' };
    }
    const reviewAbove = configs.find((g) => g.id === t.gatewayId)?.reviewAbove ?? null;
    const r = matchSubmittedTrxId({
      transaction: {
        id: t.id,
        // What the customer was told to send (amount + fee when the customer pays the fee): the SMS must carry exactly that.
        amount: t.smsAmount,
        gatewayTrxId: t.gatewayTrxId!,
        createdAt: intent.created_at,
        status: t.status,
        account: t.walletAccount,
        payerNumber: !cipher
          ? null
          : declared !== null
            ? declaredPayerNumber(cipher, { brandId: t.brandId, trxId: t.trxId, payerNumberEncrypted: declared })
            : ((await customerPhonesOfIntents(tx, cipher, [intent.id])).get(intent.id) ?? null),
      },
      storedSms: evidence.map((e) => ({
        id: e.id,
        amount: e.amount,
        trxId: e.trxId,
        time: e.smsTime,
        senderNumber: e.senderNumberEncrypted !== null && compareNumbers && cipher ? cipher.decrypt(e.senderNumberEncrypted, SMS_SENDER_NUMBER_CONTEXT, e.binding) : null,
        chainState: e.chainState,
        matchStatus: e.matchStatus,
        refused: e.resolution === 'dismissed',
        statedAt: e.statedAt,
        arrival: e.arrival,
      })),
      rules: { windowMinutes: s.windowMinutes, graceSeconds: s.graceSeconds, reviewAbove },
      otherOpenPayers,
    });

    if (r.status === 'matched') {
      try {
        await completeTransaction(tx, t.id, { source: 'sms', gatewayTrxId: t.gatewayTrxId });
      } catch (err) {
        // Locked open a moment ago: a refusal means an invariant broke elsewhere. Leave it for review.
        if (!(err instanceof AppError)) throw err;
        return { status: 'low_confidence', smsRecordId: null, reason: `completing transaction ${t.id} was refused: ${err.message}` };
      }
      if (r.smsId !== null) await markMatchedBySubmission(tx, r.smsId, t.id, {
        confidence: CERTAIN_CONFIDENCE.toFixed(4),
        reason: `${r.reason} (matched when the customer submitted the gateway trx id)`,
      });
      return { status: 'matched', smsRecordId: r.smsId, reason: r.reason };
    }
    if (evidence.length === 0) {
      // Pull-on-submit: no SMS carries this id yet, perhaps because the phone missed it; ask the phone now (docs/recovery.md).
      await askPhonesForSubmission(tx, cipher, {
        brandId: t.brandId,
        mode: t.mode,
        gatewayId: t.gatewayId,
        transactionId: t.id,
        paymentCreatedAt: intent.created_at,
        graceSeconds: s.graceSeconds,
        senders: configs.find((g) => g.id === t.gatewayId)?.senders ?? null,
      });
    }
    if (r.status === 'low_confidence' || r.status === 'balance_mismatch') {
      // The stored SMS and this submission disagree: both now point at each other for review.
      await sendToReviewWith(tx, r.smsIds, t.id, { status: r.status, reason: r.reason, reasonCode: r.reasonCode });
    }
    return { status: r.status, smsRecordId: null, reason: r.reason };
  });
}

/** The checkout's seam (`MatchSubmittedTransaction` in checkout/manual-submission-seam.ts), with the cipher the payer numbers need. */
export function createSubmissionMatcher(deps: { cipher: PiiCipher }) {
  return async (em: Db, transactionId: number): Promise<void> => {
    await matchSubmittedGatewayTrxId(em, transactionId, undefined, deps.cipher);
  };
}
