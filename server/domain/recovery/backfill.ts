import { AppError } from '../../../contract/common/errors.ts';
import { MAX_BACKFILL_WINDOW_DAYS } from '../../../contract/admin/recovery.ts';
import type { BackfillStatus, backfillReasons, Mode } from '../../../contract/vocabulary.ts';
import type { Db } from '../db.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { createNotification } from '../notifications/service.ts';
import {
  backfillRowOfDevice, backfillRows, deliverOpenRequests, deviceState, insertRequestForActiveDevice, markAnswered, markNudged, notifyPaymentsOfAnswer, phoneCheckUntil,
  phonesToAskFor, smsTimeOfRecord, widenOpenAutomaticRequest, widenPendingSubmissionRequest,
  type BackfillRow,
} from './queries.ts';

/**
 * Backfill: the service asks a phone to re-send the official-sender SMS of a
 * window of its inbox (docs/recovery.md). The phone polls its open requests as
 * commands (`GET /api/mobile/v1/commands`), re-forwards the window through the
 * ordinary SMS intake (so duplicates and matching are exactly those of any
 * forwarded SMS) and reports how many it re-sent. Unanswered requests are
 * nudged with backoff by the retry sweep and end `failed`, reported, never
 * silently dropped.
 */

type BackfillReason = (typeof backfillReasons)[number];

/** Nudges before a request is given up as `failed`. */
export const MAX_BACKFILL_ATTEMPTS = 5;
/** First wait before a nudge; doubles each attempt (2, 4, 8, 16, 32 min). */
const BACKFILL_BACKOFF_BASE_MS = 2 * 60_000;

export interface BackfillRequestView {
  id: number;
  brandId: number;
  deviceId: number;
  from: Date;
  to: Date;
  reason: BackfillReason;
  status: BackfillStatus;
  attempts: number;
  nextAttemptAt: Date;
  requestedBy: string | null;
  /** Only SMS of these senders are asked for; null: every sender the filter rules allow. */
  senders: string[] | null;
  resentCount: number | null;
  deliveredAt: Date | null;
  answeredAt: Date | null;
  failedAt: Date | null;
  createdAt: Date;
  /** For `sequence_gap`: the counter (slot null: no slot) and the numbers asked (sequences/service.ts). */
  sequences: { simSlot: number | null; epoch: string; numbers: number[] } | null;
}

function view(r: BackfillRow): BackfillRequestView {
  return {
    id: r.id,
    brandId: r.brand_id,
    deviceId: r.device_id,
    from: r.window_from,
    to: r.window_to,
    reason: r.reason,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    requestedBy: r.requested_by,
    senders: r.senders ?? null,
    resentCount: r.resent_count,
    deliveredAt: r.delivered_at,
    answeredAt: r.answered_at,
    failedAt: r.failed_at,
    createdAt: r.created_at,
    sequences:
      r.sequences && r.sequence_epoch !== null
        ? { simSlot: r.sequence_slot === null || r.sequence_slot < 0 ? null : r.sequence_slot, epoch: r.sequence_epoch, numbers: r.sequences.map(Number) }
        : null,
  };
}

/** An operator's window: 400 naming the field when it lies in the future, is reversed or too long. */
export function validateWindow(from: Date, to: Date, now = new Date()): void {
  if (from.getTime() > now.getTime()) throw new AppError('VALIDATION_ERROR', 'Must not be in the future', { field: 'from' });
  if (to.getTime() > now.getTime()) throw new AppError('VALIDATION_ERROR', 'Must not be in the future', { field: 'to' });
  if (to.getTime() <= from.getTime()) throw new AppError('VALIDATION_ERROR', 'Must be after `from`', { field: 'to' });
  if (to.getTime() - from.getTime() > MAX_BACKFILL_WINDOW_DAYS * 86_400_000) {
    throw new AppError('VALIDATION_ERROR', `The window must be at most ${MAX_BACKFILL_WINDOW_DAYS} days long`, { field: 'to' });
  }
}

/**
 * Records a request, its window clipped to the longest allowed (keeping the
 * most recent part). An automatic one overlapping an open automatic request of
 * the device widens that one instead (a broken chain and an offline spell
 * often describe the same gap) and returns null.
 */
export async function requestBackfill(
  em: Db,
  q: { deviceId: number; from: Date; to: Date; reason: BackfillReason; requestedBy?: string | null },
): Promise<BackfillRequestView | null> {
  let from = q.from;
  const to = q.to;
  const longest = MAX_BACKFILL_WINDOW_DAYS * 86_400_000;
  if (to.getTime() - from.getTime() > longest) from = new Date(to.getTime() - longest);
  if (to.getTime() <= from.getTime()) return null;
  if (q.reason !== 'manual') {
    // One request per gap: an open one overlapping this window grows to cover both (the phone re-polls open commands).
    if (await widenOpenAutomaticRequest(em, { deviceId: q.deviceId, from, to, maxDays: MAX_BACKFILL_WINDOW_DAYS })) return null;
  }
  // Only for an active device: one INSERT ... SELECT.
  const row = await insertRequestForActiveDevice(em, { deviceId: q.deviceId, from, to, reason: q.reason, requestedBy: q.requestedBy ?? null });
  return row ? view(row) : null;
}

/**
 * An operator's request: refused naming `device_id` when the device is
 * unknown (404) or revoked (409: a revoked phone no longer polls, so the
 * request could never be answered).
 */
export async function requestManualBackfill(em: Db, q: { deviceId: number; from: Date; to: Date; requestedBy: string }): Promise<BackfillRequestView> {
  const r = await requestBackfill(em, { ...q, reason: 'manual' });
  if (r) return r;
  const device = await deviceState(em, q.deviceId);
  if (device?.status === 'revoked') throw new AppError('DEVICE_REVOKED', undefined, { field: 'device_id' });
  throw new AppError('DEVICE_NOT_FOUND', undefined, { field: 'device_id' });
}

export async function listBackfillRequests(
  em: Db,
  f: { deviceId?: number; brandId?: number; status?: BackfillStatus; limit?: number },
): Promise<BackfillRequestView[]> {
  const rows = await backfillRows(em, { ...f, limit: f.limit ?? 100 });
  return rows.map(view);
}

/** The device's open requests, oldest first; those not yet delivered are marked delivered now. */
export async function pollBackfillCommands(em: Db, deviceId: number): Promise<BackfillRequestView[]> {
  const rows = await deliverOpenRequests(em, deviceId);
  return rows.map(view).sort((a, b) => a.id - b.id);
}

/**
 * The device's answer: it re-sent `resentCount` messages of the window. A
 * request of another device is not found (the answer does not reveal it
 * exists); answering twice keeps the first answer. A late answer to a `failed`
 * request still counts: the SMS came in after all.
 */
export async function completeBackfillCommand(em: Db, deviceId: number, id: number, resentCount: number): Promise<BackfillRequestView> {
  const answered = await markAnswered(em, { deviceId, id, resentCount });
  if (answered) {
    // The checkouts waiting on this phone stop saying "checking" (a payment the re-sent SMS completed already says paid).
    if (answered.reason === 'payment_submitted') await notifyPaymentsOfAnswer(em, { brandId: answered.brand_id, from: answered.window_from, to: answered.window_to });
    return view(answered);
  }
  const existing = await backfillRowOfDevice(em, { deviceId, id });
  if (!existing) throw new AppError('NOT_FOUND', 'Command not found');
  return view(existing);
}

/** Pure: when the request's next nudge is due after `attempts` nudges. */
export function nextAttemptDelayMs(attempts: number): number {
  return BACKFILL_BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1);
}

/**
 * A broken balance chain means an SMS between the previous link and this one
 * is missing (or this one is forged): ask the phone for that window. Runs in
 * the matching transaction, so the request exists exactly when the break does.
 */
export async function requestBackfillForChainBreak(tx: Db, q: { deviceId: number; previousId: number; smsTime: Date }): Promise<void> {
  const prevTime = await smsTimeOfRecord(tx, q.previousId);
  if (!prevTime) return;
  const now = Date.now();
  // The phone's inbox clock may differ from ours by its offset: a minute's margin either side.
  const from = new Date(prevTime.getTime() - 60_000);
  const to = new Date(Math.min(now, q.smsTime.getTime() + 60_000));
  await requestBackfill(tx, { deviceId: q.deviceId, from, to, reason: 'balance_chain_break' });
}

/** The push notification that asks a phone to answer its open request (first nudge and every retry). */
export function backfillNudge(r: { id: number; window_from: Date; window_to: Date }): { title: string; body: string } {
  return {
    title: 'Re-send missed SMS',
    body: `The service asks this phone to re-send the payment SMS received between ${r.window_from.toISOString()} and ${r.window_to.toISOString()} (request ${r.id}). Open the app to answer it.`,
  };
}

/** Longest window a submission asks for: a payment paid hours after its link was made is rare, and its SMS is near the submission. */
export const SUBMISSION_WINDOW_MAX_MS = 2 * 3_600_000;
/** How long the checkout says it is checking with the merchant's phone after asking; then it shows the ordinary waiting state. */
export const PHONE_CHECK_SECONDS = 90;

/**
 * Pull-on-submit (docs/recovery.md): a customer submitted a gateway trx id
 * that no stored SMS proves. In the caller's (the submission matching's)
 * transaction, each phone that receives the payment's SMS (phonesToAskFor)
 * gets a narrow request: the payment's gateway's official senders, from the
 * payment's creation minus the clock grace to now (at most
 * SUBMISSION_WINDOW_MAX_MS). A request of the phone not yet delivered is
 * widened instead (repeated submissions, several payments: one push); a new
 * request is nudged at once (counted as its first attempt, the retry sweep
 * takes over from there). Without the cipher the nudge is left to the sweep.
 * Returns the requests recorded (new ones) and widened.
 */
export async function askPhonesForSubmission(
  tx: Db,
  cipher: PiiCipher | undefined,
  q: { brandId: number; mode: Mode; gatewayId: number; transactionId: number; paymentCreatedAt: Date; graceSeconds: number; senders: readonly string[] | null },
): Promise<{ asked: number; widened: number }> {
  const to = new Date();
  const from = new Date(Math.max(q.paymentCreatedAt.getTime() - q.graceSeconds * 1000, to.getTime() - SUBMISSION_WINDOW_MAX_MS));
  if (to.getTime() <= from.getTime()) return { asked: 0, widened: 0 };
  const senders = q.senders && q.senders.length > 0 ? q.senders : null;
  let asked = 0;
  let widened = 0;
  for (const deviceId of await phonesToAskFor(tx, q)) {
    if (await widenPendingSubmissionRequest(tx, { deviceId, from, to, senders })) {
      widened++;
      continue;
    }
    const row = await insertRequestForActiveDevice(tx, { deviceId, from, to, reason: 'payment_submitted', requestedBy: null, senders });
    if (!row) continue;
    asked++;
    if (!cipher) continue;
    await markNudged(tx, { id: row.id, attempts: 1, delaySeconds: nextAttemptDelayMs(1) / 1000 });
    await createNotification(tx, cipher, { brandId: row.brand_id, deviceId, ...backfillNudge(row) });
  }
  return { asked, widened };
}

/**
 * The checkout's "checking with the merchant's phone": until when it says so
 * for a manual transaction awaiting verification (null: not checking). The
 * phone's answer, or PHONE_CHECK_SECONDS without one, ends it; a payment
 * the answer completed says paid instead.
 */
export async function phoneCheckOf(db: Db, q: { brandId: number; mode: Mode; paymentCreatedAt: Date; submittedAt: Date }, now = new Date()): Promise<Date | null> {
  const until = await phoneCheckUntil(db, { ...q, checkSeconds: PHONE_CHECK_SECONDS });
  return until && until.getTime() > now.getTime() ? until : null;
}
