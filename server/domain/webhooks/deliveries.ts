import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { WebhookEventName } from '../../../contract/events.ts';
import type { DeliveryStatus } from './entities.ts';
import { enqueueDelivery } from './queue.ts';
import { toDate, toDateStrict } from './rows.ts';

/** Delivery log reads return this many, newest first. */
const RECENT_DELIVERIES_LIMIT = 50;

export interface DeliveryView {
  id: number;
  /** The endpoint it goes to; null once that endpoint was deleted. */
  endpointId: number | null;
  eventId: string;
  transactionId: number | null;
  event: WebhookEventName;
  url: string;
  payload: string;
  responseStatus: number | null;
  responseBody: string | null;
  attempts: number;
  status: DeliveryStatus;
  lastError: string | null;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  deadLetteredAt: Date | null;
  createdAt: Date;
  mode: Mode;
  /** A test event (POST /api/v1/webhooks/tests): no object changed. */
  test: boolean;
}

export interface AttemptView {
  attempt: number;
  url: string;
  outcome: 'success' | 'failure' | 'abandoned';
  requestedAt: Date;
  durationMs: number | null;
  responseStatus: number | null;
  responseBody: string | null;
  errorKind: string | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

/** One attempt as both the merchant and the admin API show it. */
export interface AttemptResource {
  attempt: number;
  url: string;
  outcome: AttemptView['outcome'];
  requested_at: string;
  duration_ms: number | null;
  response_status: number | null;
  response_body: string | null;
  error_kind: string | null;
  error: string | null;
  next_attempt_at: string | null;
}

export function toAttemptResource(a: AttemptView): AttemptResource {
  return {
    attempt: a.attempt,
    url: a.url,
    outcome: a.outcome,
    requested_at: a.requestedAt.toISOString(),
    duration_ms: a.durationMs,
    response_status: a.responseStatus,
    response_body: a.responseBody,
    error_kind: a.errorKind,
    error: a.error,
    next_attempt_at: a.nextAttemptAt?.toISOString() ?? null,
  };
}

const SELECT_DELIVERY = `
  SELECT d.id, d.endpoint_id, e.public_id, e.transaction_id, e.event, d.url, e.payload, d.response_status, d.response_body, d.attempts,
         d.status, d.last_error, d.next_attempt_at, d.last_attempt_at, d.delivered_at, d.dead_lettered_at, d.created_at,
         e.mode, e.is_test
    FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`;

type DeliveryRow = Record<string, any>;

function toView(r: DeliveryRow): DeliveryView {
  return {
    id: Number(r.id),
    endpointId: r.endpoint_id === null ? null : Number(r.endpoint_id),
    eventId: r.public_id,
    transactionId: r.transaction_id === null ? null : Number(r.transaction_id),
    event: r.event,
    url: r.url,
    payload: r.payload,
    responseStatus: r.response_status,
    responseBody: r.response_body,
    attempts: r.attempts,
    status: r.status,
    lastError: r.last_error,
    nextAttemptAt: toDate(r.next_attempt_at),
    lastAttemptAt: toDate(r.last_attempt_at),
    deliveredAt: toDate(r.delivered_at),
    deadLetteredAt: toDate(r.dead_lettered_at),
    createdAt: toDateStrict(r.created_at),
    mode: r.mode,
    test: r.is_test,
  };
}

/** The brand's most recent deliveries, newest first. */
export async function listRecentDeliveries(em: EntityManager, brandId: number, mode: Mode, limit = RECENT_DELIVERIES_LIMIT): Promise<DeliveryView[]> {
  const rows = await em.execute<DeliveryRow[]>(`${SELECT_DELIVERY} WHERE d.brand_id = ? AND d.mode = ? ORDER BY d.created_at DESC, d.id DESC LIMIT ?`, [brandId, mode, limit]);
  return rows.map(toView);
}

/**
 * One delivery with every attempt. `brandId` scopes it (merchant API): another
 * brand's delivery is the same DELIVERY_NOT_FOUND as one that does not exist.
 * Admin callers pass null.
 */
export async function getDelivery(em: EntityManager, brandId: number | null, deliveryId: number, mode: Mode | null = null): Promise<DeliveryView & { attemptLog: AttemptView[] }> {
  const [row] = await em.execute<DeliveryRow[]>(`${SELECT_DELIVERY} WHERE d.id = ? AND (?::bigint IS NULL OR d.brand_id = ?) AND (?::text IS NULL OR d.mode = ?)`, [
    deliveryId,
    brandId,
    brandId,
    mode,
    mode,
  ]);
  if (!row) throw new AppError('DELIVERY_NOT_FOUND');
  const attempts = await em.execute<DeliveryRow[]>(
    `SELECT attempt, url, outcome, requested_at, duration_ms, response_status, response_body, error_kind, error, next_attempt_at
       FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt`,
    [deliveryId],
  );
  return {
    ...toView(row),
    attemptLog: attempts.map((a) => ({
      attempt: a.attempt,
      url: a.url,
      outcome: a.outcome,
      requestedAt: toDateStrict(a.requested_at),
      durationMs: a.duration_ms,
      responseStatus: a.response_status,
      responseBody: a.response_body,
      errorKind: a.error_kind,
      error: a.error,
      nextAttemptAt: toDate(a.next_attempt_at),
    })),
  };
}

// Back to `pending`, due now, with a fresh retry window; the id, the event (so the
// body, its id and X-Webhook-Id) and the attempt count stay, and the next attempt
// number continues from it. The conditional WHERE makes a replay racing another
// replay, or a delivery that is not a dead letter, change nothing.
const REPLAY = `
  UPDATE webhook_deliveries d
     SET status = 'pending', next_attempt_at = now(), first_attempt_at = NULL, dead_lettered_at = NULL,
         replayed_at = now(), lease_token = NULL, lease_until = NULL, updated_at = now()
    FROM webhook_endpoints ep
   WHERE ep.id = d.endpoint_id AND ep.enabled AND d.status = 'dead_letter'`;

/**
 * Replays one dead letter (admin). INVALID_STATE when it is not a dead letter, its
 * endpoint was deleted, or its endpoint is disabled: re-enable the endpoint first, or the replay would
 * dead-letter again at once.
 */
export async function replayDeadLetter(em: EntityManager, deliveryId: number, opts: { brandId?: number } = {}): Promise<DeliveryView> {
  return em.transactional(async (tx) => {
    const replayed = await tx.execute<Array<{ id: string }>>(`${REPLAY} AND d.id = ? AND (?::bigint IS NULL OR d.brand_id = ?) RETURNING d.id`, [
      deliveryId,
      opts.brandId ?? null,
      opts.brandId ?? null,
    ]);
    if (replayed.length === 0) {
      const current = await getDelivery(tx, opts.brandId ?? null, deliveryId);
      throw new AppError(
        'INVALID_STATE',
        current.status !== 'dead_letter'
          ? `Only dead letters can be replayed; this delivery is ${current.status}`
          : current.endpointId === null
            ? 'The webhook endpoint of this delivery was deleted; it cannot be replayed'
            : 'The webhook endpoint is disabled; enable it before replaying',
      );
    }
    await enqueueDelivery(tx, deliveryId);
    const [row] = await tx.execute<DeliveryRow[]>(`${SELECT_DELIVERY} WHERE d.id = ?`, [deliveryId]);
    return toView(row!);
  });
}

/**
 * Replays every dead letter that became one at or after `since` (admin), in
 * batches of `limit`. Deliveries whose endpoint is disabled are left and counted.
 */
export async function replayDeadLetters(
  em: EntityManager,
  opts: { since: Date; brandId?: number; limit?: number },
): Promise<{ replayed: number; skippedDisabled: number }> {
  return em.transactional(async (tx) => {
    const rows = await tx.execute<Array<{ id: string }>>(
      `${REPLAY} AND d.id IN (
         SELECT id FROM webhook_deliveries
          WHERE status = 'dead_letter' AND dead_lettered_at >= ? AND (?::bigint IS NULL OR brand_id = ?)
          ORDER BY dead_lettered_at LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING d.id`,
      [opts.since, opts.brandId ?? null, opts.brandId ?? null, opts.limit ?? 1000],
    );
    for (const { id } of rows) await enqueueDelivery(tx, Number(id));
    const [skipped] = await tx.execute<Array<{ n: string }>>(
      `SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
        WHERE d.status = 'dead_letter' AND d.dead_lettered_at >= ? AND NOT ep.enabled AND (?::bigint IS NULL OR d.brand_id = ?)`,
      [opts.since, opts.brandId ?? null, opts.brandId ?? null],
    );
    return { replayed: rows.length, skippedDisabled: Number(skipped!.n) };
  });
}
