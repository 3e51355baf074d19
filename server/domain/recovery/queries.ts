import { sql, type Selectable } from 'kysely';
import type { BackfillStatus, backfillReasons, Mode } from '../../../contract/vocabulary.ts';
import type { DB, Db } from '../db.ts';
import { PAYMENT_STATUS_CHANNEL } from '../payments/status-notify.ts';

/** The backfill requests (backfill.ts, retry-backfill.job.ts). */

type BackfillReason = (typeof backfillReasons)[number];

export const BACKFILL_COLUMNS = [
  'id', 'brand_id', 'device_id', 'window_from', 'window_to', 'reason', 'status', 'attempts', 'next_attempt_at',
  'requested_by', 'resent_count', 'delivered_at', 'answered_at', 'failed_at', 'created_at', 'senders',
  'sequence_slot', 'sequence_epoch', 'sequences',
] as const;
export type BackfillRow = Pick<Selectable<DB['backfill_requests']>, (typeof BACKFILL_COLUMNS)[number]>;

/**
 * Widens the device's oldest open automatic request overlapping [from, to] to
 * cover both windows, when the union stays within `maxDays`; false when there
 * was none.
 */
export async function widenOpenAutomaticRequest(db: Db, q: { deviceId: number; from: Date; to: Date; maxDays: number }): Promise<boolean> {
  const merged = await db
    .updateTable('backfill_requests')
    .set({
      window_from: sql<Date>`LEAST(window_from, ${q.from}::timestamptz)`,
      window_to: sql<Date>`GREATEST(window_to, ${q.to}::timestamptz)`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', (eb) =>
      eb
        .selectFrom('backfill_requests')
        .select('id')
        .where('device_id', '=', q.deviceId)
        .where('status', 'in', ['pending', 'delivered'])
        .where('reason', '<>', 'manual')
        // A submission's request asks for some senders only: an all-senders window never folds into it.
        .where('reason', '<>', 'payment_submitted')
        // A sequence request names its numbers: the phone answers those, not a window, so no window is merged into it.
        .where('sequences', 'is', null)
        .where('window_from', '<=', q.to)
        .where('window_to', '>=', q.from)
        // Raw: interval arithmetic on the merged window.
        .where(sql<boolean>`GREATEST(window_to, ${q.to}::timestamptz) - LEAST(window_from, ${q.from}::timestamptz) <= make_interval(days => ${q.maxDays})`)
        .orderBy('id')
        .limit(1),
    )
    .returning('id')
    .execute();
  return merged.length > 0;
}

/** Records a request for the device if it is active (one INSERT ... SELECT); undefined otherwise. */
export async function insertRequestForActiveDevice(
  db: Db,
  q: { deviceId: number; from: Date; to: Date; reason: BackfillReason; requestedBy: string | null; senders?: readonly string[] | null },
): Promise<BackfillRow | undefined> {
  const rows = await db
    .insertInto('backfill_requests')
    .columns(['brand_id', 'device_id', 'window_from', 'window_to', 'reason', 'requested_by', 'senders'])
    .expression(
      db
        .selectFrom('devices')
        .select(['brand_id', 'id'])
        .select([
          sql<Date>`${q.from}::timestamptz`.as('window_from'),
          sql<Date>`${q.to}::timestamptz`.as('window_to'),
          sql<BackfillReason>`${q.reason}::varchar`.as('reason'),
          sql<string | null>`${q.requestedBy}::varchar`.as('requested_by'),
          sql<string[] | null>`${q.senders ? [...q.senders] : null}::text[]`.as('senders'),
        ])
        .where('id', '=', q.deviceId)
        .where('status', '=', 'active'),
    )
    .returning(BACKFILL_COLUMNS)
    .execute();
  return rows[0];
}

/** A device's brand and status, if it exists. */
export async function deviceState(db: Db, deviceId: number): Promise<{ brand_id: number; status: 'active' | 'revoked' } | undefined> {
  return db.selectFrom('devices').select(['brand_id', 'status']).where('id', '=', deviceId).executeTakeFirst();
}

/** Requests, newest first, filtered by device, brand and status. */
export async function backfillRows(db: Db, f: { deviceId?: number; brandId?: number; status?: BackfillStatus; limit: number }): Promise<BackfillRow[]> {
  return db
    .selectFrom('backfill_requests')
    .select(BACKFILL_COLUMNS)
    .$if(f.deviceId !== undefined, (qb) => qb.where('device_id', '=', f.deviceId!))
    .$if(f.brandId !== undefined, (qb) => qb.where('brand_id', '=', f.brandId!))
    .$if(f.status !== undefined, (qb) => qb.where('status', '=', f.status!))
    .orderBy('id', 'desc')
    .limit(f.limit)
    .execute();
}

/** The device's open requests, each marked delivered (its first delivery time kept). */
export async function deliverOpenRequests(db: Db, deviceId: number): Promise<BackfillRow[]> {
  return db
    .updateTable('backfill_requests')
    .set({ status: 'delivered', delivered_at: sql<Date>`COALESCE(delivered_at, now())`, updated_at: sql<Date>`now()` })
    .where('device_id', '=', deviceId)
    .where('status', 'in', ['pending', 'delivered'])
    .returning(BACKFILL_COLUMNS)
    .execute();
}

/** The device's request answered with its count, unless it was answered before; undefined then (or when it is not the device's). */
export async function markAnswered(db: Db, q: { deviceId: number; id: number; resentCount: number }): Promise<BackfillRow | undefined> {
  const rows = await db
    .updateTable('backfill_requests')
    .set({
      status: 'answered',
      resent_count: q.resentCount,
      answered_at: sql<Date>`now()`,
      delivered_at: sql<Date>`COALESCE(delivered_at, now())`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', q.id)
    .where('device_id', '=', q.deviceId)
    .where('status', '<>', 'answered')
    .returning(BACKFILL_COLUMNS)
    .execute();
  return rows[0];
}

export async function backfillRowOfDevice(db: Db, q: { deviceId: number; id: number }): Promise<BackfillRow | undefined> {
  return db.selectFrom('backfill_requests').select(BACKFILL_COLUMNS).where('id', '=', q.id).where('device_id', '=', q.deviceId).executeTakeFirst();
}

/** An SMS record's time. */
export async function smsTimeOfRecord(db: Db, recordId: number): Promise<Date | null> {
  return (await db.selectFrom('sms_records').select('sms_time').where('id', '=', recordId).executeTakeFirst())?.sms_time ?? null;
}

/** Up to `limit` open requests whose nudge is due, oldest due first, locked; rows another worker holds are skipped. */
export async function lockDueRequests(tx: Db, limit: number) {
  return tx
    .selectFrom('backfill_requests')
    .select(['id', 'brand_id', 'device_id', 'attempts', 'window_from', 'window_to'])
    .where('status', 'in', ['pending', 'delivered'])
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('next_attempt_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export async function markFailed(tx: Db, id: number): Promise<void> {
  await tx.updateTable('backfill_requests').set({ status: 'failed', failed_at: sql<Date>`now()`, updated_at: sql<Date>`now()` }).where('id', '=', id).execute();
}

/** Counts a nudge and sets the next one `delaySeconds` from now. */
export async function markNudged(tx: Db, q: { id: number; attempts: number; delaySeconds: number }): Promise<void> {
  await tx
    .updateTable('backfill_requests')
    .set({ attempts: q.attempts, next_attempt_at: sql<Date>`now() + make_interval(secs => ${q.delaySeconds})`, updated_at: sql<Date>`now()` })
    .where('id', '=', q.id)
    .execute();
}

/** Failed requests not reported yet, marked reported. */
export async function takeUnreportedFailures(db: Db) {
  return db
    .updateTable('backfill_requests')
    .set({ reported_at: sql<Date>`now()` })
    .where('status', '=', 'failed')
    .where('reported_at', 'is', null)
    .returning(['id', 'brand_id', 'device_id', 'reason', 'failed_at'])
    .execute();
}

/**
 * Pull-on-submit: the phones asked when a customer submits a trx id that no
 * stored SMS proves: the phone bound to the wallet account the payment was
 * made into, when it is an active phone of the payment's mode; when the
 * account names no phone (or the payment was made into the gateway's own
 * number), every active phone of the brand in the payment's mode.
 */
export async function phonesToAskFor(
  tx: Db,
  q: { brandId: number; mode: Mode; gatewayId: number; transactionId: number },
): Promise<number[]> {
  // The phone of the wallet account the payment was made into, when the account names one (docs/matching.md,
  // section 11): only its SMS can prove the payment. Else every active phone of the brand in the payment's mode.
  const rows = await tx
    .selectFrom('devices as d')
    .select('d.id')
    .where('d.brand_id', '=', q.brandId)
    .where('d.mode', '=', q.mode)
    .where('d.status', '=', 'active')
    // Raw: the account's phone, or any phone when it names none (or there is no account), as one COALESCE.
    .where(sql<boolean>`d.id = COALESCE((SELECT a.device_id FROM transactions t JOIN wallet_accounts a ON a.id = t.wallet_account_id WHERE t.id = ${q.transactionId}), d.id)`)
    .orderBy('d.id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Widens the device's open `payment_submitted` request not yet delivered to
 * the phone (the phone has not read its window yet, so the wider one is what
 * it will answer) to cover [from, to] and the union of both sender lists;
 * false when there was none. A delivered request is never widened: the phone
 * may be answering its old window right now.
 */
export async function widenPendingSubmissionRequest(db: Db, q: { deviceId: number; from: Date; to: Date; senders: readonly string[] | null }): Promise<boolean> {
  const senders = q.senders ? [...q.senders] : null;
  const merged = await db
    .updateTable('backfill_requests')
    .set({
      window_from: sql<Date>`LEAST(window_from, ${q.from}::timestamptz)`,
      window_to: sql<Date>`GREATEST(window_to, ${q.to}::timestamptz)`,
      // Null (every sender) on either side stays null; else the union, each sender once.
      senders: sql<string[] | null>`CASE WHEN senders IS NULL OR ${senders}::text[] IS NULL THEN NULL
        ELSE ARRAY(SELECT DISTINCT s FROM unnest(senders || ${senders}::text[]) AS s ORDER BY s) END`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', (eb) =>
      eb
        .selectFrom('backfill_requests')
        .select('id')
        .where('device_id', '=', q.deviceId)
        .where('status', '=', 'pending')
        .where('reason', '=', 'payment_submitted')
        .orderBy('id')
        .limit(1),
    )
    .returning('id')
    .execute();
  return merged.length > 0;
}

/**
 * Until when the checkout says it is checking with the merchant's phone for a
 * transaction: the latest open `payment_submitted` request of the brand whose
 * window covers the payment's creation and reaches the submission, plus
 * `checkSeconds` after it was last asked (its window's end is the moment of
 * asking). Null when there is none.
 */
export async function phoneCheckUntil(db: Db, q: { brandId: number; mode: Mode; paymentCreatedAt: Date; submittedAt: Date; checkSeconds: number }): Promise<Date | null> {
  const row = await db
    .selectFrom('backfill_requests as r')
    // Phones of the payment's mode only: a test phone's request says nothing about a live payment.
    .innerJoin('devices as d', 'd.id', 'r.device_id')
    .select(sql<Date | null>`max(r.window_to) + make_interval(secs => ${q.checkSeconds})`.as('until'))
    .where('r.brand_id', '=', q.brandId)
    .where('d.mode', '=', q.mode)
    .where('r.reason', '=', 'payment_submitted')
    .where('r.status', 'in', ['pending', 'delivered'])
    .where('r.window_from', '<=', q.paymentCreatedAt)
    .where('r.window_to', '>=', q.submittedAt)
    .executeTakeFirst();
  return row?.until ?? null;
}

/**
 * The phone answered a `payment_submitted` request: every checkout of the
 * brand whose manual transaction awaits verification and was submitted within
 * the window is told to look again (its "checking with the phone" is over).
 * One pg_notify per payment, delivered on commit.
 */
export async function notifyPaymentsOfAnswer(db: Db, q: { brandId: number; from: Date; to: Date }): Promise<void> {
  await db
    .selectFrom('transactions')
    .select(sql<unknown>`pg_notify(${PAYMENT_STATUS_CHANNEL}, intent_id::text)`.as('notified'))
    .where('brand_id', '=', q.brandId)
    .where('status', '=', 'awaiting_verification')
    .where('created_at', '>=', q.from)
    .where('created_at', '<=', q.to)
    .execute();
}
