import { AppError } from '../../../contract/common/errors.ts';
import type { Mode, WebhookEventName } from '../../../contract/vocabulary.ts';
import { sql } from 'kysely';
import { transaction, type Db } from '../db.ts';
import type { DeliveryStatus } from './entities.ts';
import { enqueueDelivery } from './queue.ts';

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

function selectDelivery(em: Db) {
  return em
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id', 'd.endpoint_id', 'e.public_id', 'e.transaction_id', 'e.event', 'd.url', 'e.payload', 'd.response_status', 'd.response_body', 'd.attempts',
      'd.status', 'd.last_error', 'd.next_attempt_at', 'd.last_attempt_at', 'd.delivered_at', 'd.dead_lettered_at', 'd.created_at', 'e.mode', 'e.is_test',
    ]);
}

type DeliveryRow = Awaited<ReturnType<ReturnType<typeof selectDelivery>['executeTakeFirstOrThrow']>>;

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
  const rows = await selectDelivery(em).where('d.brand_id', '=', brandId).where('d.mode', '=', mode).orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(limit).execute();
  return rows.map(toView);
}

/**
 * One delivery with every attempt. `brandId` scopes it (merchant API): another
 * brand's delivery is the same DELIVERY_NOT_FOUND as one that does not exist.
 * Admin callers pass null.
 */
export async function getDelivery(em: Db, brandId: number | null, deliveryId: number, mode: Mode | null = null): Promise<DeliveryView & { attemptLog: AttemptView[] }> {
  let q = selectDelivery(em).where('d.id', '=', deliveryId);
  if (brandId !== null) q = q.where('d.brand_id', '=', brandId);
  if (mode !== null) q = q.where('d.mode', '=', mode);
  const row = await q.executeTakeFirst();
  if (!row) throw new AppError('DELIVERY_NOT_FOUND');
  const attempts = await em
    .selectFrom('webhook_attempts')
    .select(['attempt', 'url', 'outcome', 'requested_at', 'duration_ms', 'response_status', 'response_body', 'error_kind', 'error', 'next_attempt_at'])
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt')
    .execute();
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

// Back to `pending`, due now, with a fresh retry window; the id, the event (so the
// body, its id and X-Webhook-Id) and the attempt count stay, and the next attempt
// number continues from it. The conditional WHERE makes a replay racing another
// replay, or a delivery that is not a dead letter, change nothing.
function replay(tx: Db) {
  const now = sql<Date>`now()`;
  return tx
    .updateTable('webhook_deliveries as d')
    .from('webhook_endpoints as ep')
    .set({ status: 'pending', next_attempt_at: now, first_attempt_at: null, dead_lettered_at: null, replayed_at: now, lease_token: null, lease_until: null, updated_at: now })
    .whereRef('ep.id', '=', 'd.endpoint_id')
    .where('ep.enabled', '=', true)
    .where('d.status', '=', 'dead_letter');
}

/**
 * Replays one dead letter (admin). INVALID_STATE when it is not a dead letter, its
 * endpoint was deleted, or its endpoint is disabled: re-enable the endpoint first, or the replay would
 * dead-letter again at once.
 */
export async function replayDeadLetter(em: Db, deliveryId: number, opts: { brandId?: number } = {}): Promise<DeliveryView> {
  return transaction(em, async (tx) => {
    let one = replay(tx).where('d.id', '=', deliveryId);
    if (opts.brandId !== undefined) one = one.where('d.brand_id', '=', opts.brandId);
    const replayed = await one.returning('d.id').execute();
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
    return toView(await selectDelivery(tx).where('d.id', '=', deliveryId).executeTakeFirstOrThrow());
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
    let batch = tx
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'dead_letter')
      .where('dead_lettered_at', '>=', opts.since);
    if (opts.brandId !== undefined) batch = batch.where('brand_id', '=', opts.brandId);
    const rows = await replay(tx)
      .where('d.id', 'in', batch.orderBy('dead_lettered_at').limit(opts.limit ?? 1000).forUpdate().skipLocked())
      .returning('d.id')
      .execute();
    for (const { id } of rows) await enqueueDelivery(tx, id);
    let skipped = tx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('d.status', '=', 'dead_letter')
      .where('d.dead_lettered_at', '>=', opts.since)
      .where('ep.enabled', '=', false);
    if (opts.brandId !== undefined) skipped = skipped.where('d.brand_id', '=', opts.brandId);
    const { n } = await skipped.executeTakeFirstOrThrow();
    return { replayed: rows.length, skippedDisabled: Number(n) };
  });
}
