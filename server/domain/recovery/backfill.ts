import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';

/**
 * Backfill: the service asks a phone to re-send the official-sender SMS of a
 * window of its inbox (docs/recovery.md). The phone polls its open requests as
 * commands (`GET /api/mobile/v1/commands`), re-forwards the window through the
 * ordinary SMS intake (so duplicates and matching are exactly those of any
 * forwarded SMS) and reports how many it re-sent. Unanswered requests are
 * nudged with backoff by the retry sweep and end `failed`, reported, never
 * silently dropped.
 */

export const backfillReasons = ['manual', 'offline', 'heartbeat_gap', 'balance_chain_break'] as const;
export type BackfillReason = (typeof backfillReasons)[number];
export const backfillStatuses = ['pending', 'delivered', 'answered', 'failed'] as const;
export type BackfillStatus = (typeof backfillStatuses)[number];

/** Longest window one request may ask for: a phone re-sending weeks of SMS is a different job (an export). */
const MAX_BACKFILL_WINDOW_DAYS = 7;
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
  resentCount: number | null;
  deliveredAt: Date | null;
  answeredAt: Date | null;
  failedAt: Date | null;
  createdAt: Date;
}

interface Row {
  id: string;
  brand_id: string;
  device_id: string;
  window_from: Date;
  window_to: Date;
  reason: BackfillReason;
  status: BackfillStatus;
  attempts: number;
  next_attempt_at: Date;
  requested_by: string | null;
  resent_count: number | null;
  delivered_at: Date | null;
  answered_at: Date | null;
  failed_at: Date | null;
  created_at: Date;
}

const d = (v: Date | string | null) => (v === null ? null : new Date(v));

function view(r: Row): BackfillRequestView {
  return {
    id: Number(r.id),
    brandId: Number(r.brand_id),
    deviceId: Number(r.device_id),
    from: new Date(r.window_from),
    to: new Date(r.window_to),
    reason: r.reason,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: new Date(r.next_attempt_at),
    requestedBy: r.requested_by,
    resentCount: r.resent_count,
    deliveredAt: d(r.delivered_at),
    answeredAt: d(r.answered_at),
    failedAt: d(r.failed_at),
    createdAt: new Date(r.created_at),
  };
}

const COLUMNS = 'id, brand_id, device_id, window_from, window_to, reason, status, attempts, next_attempt_at, requested_by, resent_count, delivered_at, answered_at, failed_at, created_at';

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
  em: EntityManager,
  q: { deviceId: number; from: Date; to: Date; reason: BackfillReason; requestedBy?: string | null },
): Promise<BackfillRequestView | null> {
  let from = q.from;
  const to = q.to;
  const longest = MAX_BACKFILL_WINDOW_DAYS * 86_400_000;
  if (to.getTime() - from.getTime() > longest) from = new Date(to.getTime() - longest);
  if (to.getTime() <= from.getTime()) return null;
  if (q.reason !== 'manual') {
    // One request per gap: an open one overlapping this window grows to cover both (the phone re-polls open commands).
    const merged = await em.execute<Row[]>(
      `UPDATE backfill_requests SET window_from = LEAST(window_from, ?::timestamptz), window_to = GREATEST(window_to, ?::timestamptz), updated_at = now()
        WHERE id = (SELECT id FROM backfill_requests
                     WHERE device_id = ? AND status IN ('pending', 'delivered') AND reason <> 'manual'
                       AND window_from <= ?::timestamptz AND window_to >= ?::timestamptz
                       AND GREATEST(window_to, ?::timestamptz) - LEAST(window_from, ?::timestamptz) <= make_interval(days => ?)
                     ORDER BY id LIMIT 1)
        RETURNING id`,
      [from, to, q.deviceId, to, from, to, from, MAX_BACKFILL_WINDOW_DAYS],
    );
    if (merged[0]) return null;
  }
  const rows = await em.execute<Row[]>(
    `INSERT INTO backfill_requests (brand_id, device_id, window_from, window_to, reason, requested_by)
     SELECT brand_id, id, ?, ?, ?, ? FROM devices WHERE id = ? AND status = 'active'
     RETURNING ${COLUMNS}`,
    [from, to, q.reason, q.requestedBy ?? null, q.deviceId],
  );
  return rows[0] ? view(rows[0]) : null;
}

export async function listBackfillRequests(
  em: EntityManager,
  f: { deviceId?: number; brandId?: number; status?: BackfillStatus; limit?: number },
): Promise<BackfillRequestView[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const filters: Array<[string, unknown]> = [['device_id', f.deviceId], ['brand_id', f.brandId], ['status', f.status]];
  for (const [column, value] of filters) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  const rows = await em.execute<Row[]>(
    `SELECT ${COLUMNS} FROM backfill_requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
    [...params, f.limit ?? 100],
  );
  return rows.map(view);
}

/** The device's open requests, oldest first; those not yet delivered are marked delivered now. */
export async function pollBackfillCommands(em: EntityManager, deviceId: number): Promise<BackfillRequestView[]> {
  const rows = await em.execute<Row[]>(
    `UPDATE backfill_requests
        SET status = 'delivered', delivered_at = COALESCE(delivered_at, now()), updated_at = now()
      WHERE device_id = ? AND status IN ('pending', 'delivered')
      RETURNING ${COLUMNS}`,
    [deviceId],
  );
  return rows.map(view).sort((a, b) => a.id - b.id);
}

/**
 * The device's answer: it re-sent `resentCount` messages of the window. A
 * request of another device is not found (the answer does not reveal it
 * exists); answering twice keeps the first answer. A late answer to a `failed`
 * request still counts: the SMS came in after all.
 */
export async function completeBackfillCommand(em: EntityManager, deviceId: number, id: number, resentCount: number): Promise<BackfillRequestView> {
  const rows = await em.execute<Row[]>(
    `UPDATE backfill_requests
        SET status = 'answered', resent_count = ?, answered_at = now(), delivered_at = COALESCE(delivered_at, now()), updated_at = now()
      WHERE id = ? AND device_id = ? AND status <> 'answered'
      RETURNING ${COLUMNS}`,
    [resentCount, id, deviceId],
  );
  if (rows[0]) return view(rows[0]);
  const existing = await em.execute<Row[]>(`SELECT ${COLUMNS} FROM backfill_requests WHERE id = ? AND device_id = ?`, [id, deviceId]);
  if (!existing[0]) throw new AppError('NOT_FOUND', 'Command not found');
  return view(existing[0]);
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
export async function requestBackfillForChainBreak(tx: EntityManager, q: { deviceId: number; previousId: number; smsTime: Date }): Promise<void> {
  const [prev] = await tx.execute<Array<{ sms_time: Date | null }>>('SELECT sms_time FROM sms_records WHERE id = ?', [q.previousId]);
  if (!prev?.sms_time) return;
  const now = Date.now();
  // The phone's inbox clock may differ from ours by its offset: a minute's margin either side.
  const from = new Date(new Date(prev.sms_time).getTime() - 60_000);
  const to = new Date(Math.min(now, q.smsTime.getTime() + 60_000));
  await requestBackfill(tx, { deviceId: q.deviceId, from, to, reason: 'balance_chain_break' });
}
