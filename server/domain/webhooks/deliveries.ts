import { AppError } from '../../../contract/common/errors.ts';
import type { Mode, WebhookEventName } from '../../../contract/vocabulary.ts';
import { transaction, type Db } from '../db.ts';
import type { DeliveryStatus } from './entities.ts';
import { enqueueDelivery } from './queue.ts';
import { countDisabledDeadLetters, replayOne, replaySince, selectAttempts, selectDeliveryById, selectRecentDeliveries, type DeliveryRow } from './queries/deliveries.ts';

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

function toView(r: DeliveryRow): DeliveryView {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    eventId: r.public_id,
    transactionId: r.transaction_id,
    event: r.event,
    url: r.url,
    payload: r.payload,
    responseStatus: r.response_status,
    responseBody: r.response_body,
    attempts: r.attempts,
    status: r.status,
    lastError: r.last_error,
    nextAttemptAt: r.next_attempt_at,
    lastAttemptAt: r.last_attempt_at,
    deliveredAt: r.delivered_at,
    deadLetteredAt: r.dead_lettered_at,
    createdAt: r.created_at,
    mode: r.mode,
    test: r.is_test,
  };
}

/** The brand's most recent deliveries, newest first. */
export async function listRecentDeliveries(em: Db, brandId: number, mode: Mode, limit = RECENT_DELIVERIES_LIMIT): Promise<DeliveryView[]> {
  const rows = await selectRecentDeliveries(em, brandId, mode, limit);
  return rows.map(toView);
}

/**
 * One delivery with every attempt. `brandId` scopes it (merchant API): another
 * brand's delivery is the same DELIVERY_NOT_FOUND as one that does not exist.
 * Admin callers pass null.
 */
export async function getDelivery(em: Db, brandId: number | null, deliveryId: number, mode: Mode | null = null): Promise<DeliveryView & { attemptLog: AttemptView[] }> {
  const row = await selectDeliveryById(em, deliveryId, { brandId, mode });
  if (!row) throw new AppError('DELIVERY_NOT_FOUND');
  const attempts = await selectAttempts(em, deliveryId);
  return {
    ...toView(row),
    attemptLog: attempts.map((a) => ({
      attempt: a.attempt,
      url: a.url,
      outcome: a.outcome,
      requestedAt: a.requested_at,
      durationMs: a.duration_ms,
      responseStatus: a.response_status,
      responseBody: a.response_body,
      errorKind: a.error_kind,
      error: a.error,
      nextAttemptAt: a.next_attempt_at,
    })),
  };
}

/**
 * Replays one dead letter (admin). INVALID_STATE when it is not a dead letter, its
 * endpoint was deleted, or its endpoint is disabled: re-enable the endpoint first, or the replay would
 * dead-letter again at once.
 */
export async function replayDeadLetter(em: Db, deliveryId: number, opts: { brandId?: number } = {}): Promise<DeliveryView> {
  return transaction(em, async (tx) => {
    if (!(await replayOne(tx, deliveryId, opts.brandId))) {
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
    return toView((await selectDeliveryById(tx, deliveryId, { brandId: null, mode: null }))!);
  });
}

/**
 * Replays every dead letter that became one at or after `since` (admin), in
 * batches of `limit`. Deliveries whose endpoint is disabled are left and counted.
 */
export async function replayDeadLetters(
  em: Db,
  opts: { since: Date; brandId?: number; limit?: number },
): Promise<{ replayed: number; skippedDisabled: number }> {
  return transaction(em, async (tx) => {
    const ids = await replaySince(tx, { since: opts.since, brandId: opts.brandId, limit: opts.limit ?? 1000 });
    for (const id of ids) await enqueueDelivery(tx, id);
    const skippedDisabled = await countDisabledDeadLetters(tx, opts);
    return { replayed: ids.length, skippedDisabled };
  });
}
