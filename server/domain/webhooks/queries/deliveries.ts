import { sql } from 'kysely';
import type { Mode, WebhookEventName } from '../../../../contract/vocabulary.ts';
import { utcDayAfter, utcDayStart, type Db } from '../../db.ts';
import { scopeParam } from '../../brands/scope.ts';
import type { DeliveryStatus } from '../entities.ts';

// The statements of the delivery log and of replaying dead letters.

function selectDelivery(db: Db) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id', 'd.endpoint_id', 'e.public_id', 'e.transaction_id', 'e.event', 'd.url', 'e.payload', 'd.response_status', 'd.response_body', 'd.attempts',
      'd.status', 'd.last_error', 'd.next_attempt_at', 'd.last_attempt_at', 'd.delivered_at', 'd.dead_lettered_at', 'd.created_at', 'e.mode', 'e.is_test',
    ]);
}

/** A delivery with its event. */
export type DeliveryRow = Awaited<ReturnType<ReturnType<typeof selectDelivery>['executeTakeFirstOrThrow']>>;

/** The brand's most recent deliveries of the mode, newest first. */
export async function selectRecentDeliveries(db: Db, brandId: number, mode: Mode, limit: number): Promise<DeliveryRow[]> {
  return selectDelivery(db).where('d.brand_id', '=', brandId).where('d.mode', '=', mode).orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(limit).execute();
}

/** One delivery, of the brand and mode when given. */
export async function selectDeliveryById(db: Db, deliveryId: number, scope: { brandId: number | null; mode: Mode | null }): Promise<DeliveryRow | undefined> {
  let q = selectDelivery(db).where('d.id', '=', deliveryId);
  if (scope.brandId !== null) q = q.where('d.brand_id', '=', scope.brandId);
  if (scope.mode !== null) q = q.where('d.mode', '=', scope.mode);
  return q.executeTakeFirst();
}

/** A delivery's attempts, in order. */
export async function selectAttempts(db: Db, deliveryId: number) {
  return db
    .selectFrom('webhook_attempts')
    .select(['attempt', 'url', 'outcome', 'requested_at', 'duration_ms', 'response_status', 'response_body', 'error_kind', 'error', 'next_attempt_at'])
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt')
    .execute();
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

/** Replays one dead letter whose endpoint is enabled (of the brand when given); false when nothing changed. */
export async function replayOne(tx: Db, deliveryId: number, brandId?: number): Promise<boolean> {
  let one = replay(tx).where('d.id', '=', deliveryId);
  if (brandId !== undefined) one = one.where('d.brand_id', '=', brandId);
  return (await one.returning('d.id').execute()).length > 0;
}

/**
 * Replays up to `limit` dead letters since `since` (of the brand when given),
 * oldest first, whose endpoint is enabled; rows another replay holds are
 * skipped. Their ids.
 */
export async function replaySince(tx: Db, opts: { since: Date; brandId?: number; limit: number }): Promise<number[]> {
  let batch = tx.selectFrom('webhook_deliveries').select('id').where('status', '=', 'dead_letter').where('dead_lettered_at', '>=', opts.since);
  if (opts.brandId !== undefined) batch = batch.where('brand_id', '=', opts.brandId);
  const rows = await replay(tx)
    .where('d.id', 'in', batch.orderBy('dead_lettered_at').limit(opts.limit).forUpdate().skipLocked())
    .returning('d.id')
    .execute();
  return rows.map((r) => r.id);
}

/** Dead letters since `since` (of the brand when given) whose endpoint is disabled. */
export async function countDisabledDeadLetters(db: Db, opts: { since: Date; brandId?: number }): Promise<number> {
  let skipped = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('d.status', '=', 'dead_letter')
    .where('d.dead_lettered_at', '>=', opts.since)
    .where('ep.enabled', '=', false);
  if (opts.brandId !== undefined) skipped = skipped.where('d.brand_id', '=', opts.brandId);
  const { n } = await skipped.executeTakeFirstOrThrow();
  return Number(n);
}

// The console's view of deliveries: every brand's, with the brand id.

function fromDeliveries(db: Db) {
  return db.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id');
}

const ADMIN_COLUMNS = [
  'd.id', 'd.brand_id', 'd.endpoint_id', 'e.public_id', 'e.transaction_id', 'e.event', 'd.url', 'e.payload', 'd.response_status', 'd.response_body', 'd.attempts',
  'd.status', 'd.last_error', 'd.next_attempt_at', 'd.last_attempt_at', 'd.delivered_at', 'd.dead_lettered_at', 'd.created_at', 'e.mode', 'e.is_test',
] as const;

const selectAdminDeliveries = (db: Db) => fromDeliveries(db).select(ADMIN_COLUMNS);
export type AdminDeliveryRow = Awaited<ReturnType<ReturnType<typeof selectAdminDeliveries>['executeTakeFirstOrThrow']>>;

export async function selectAdminDelivery(db: Db, deliveryId: number): Promise<AdminDeliveryRow | undefined> {
  return selectAdminDeliveries(db).where('d.id', '=', deliveryId).executeTakeFirst();
}

export interface AdminDeliveryRowFilter {
  brandId?: number;
  /** Only these brands' deliveries; absent or null: every brand. */
  brandIds?: number[] | null;
  mode?: Mode;
  status?: DeliveryStatus;
  event?: WebhookEventName;
  /** Inclusive UTC dates, `YYYY-MM-DD`. */
  from?: string;
  to?: string;
}

/** One page of the filtered deliveries, newest first, and how many match. */
export async function selectAdminDeliveryPage(db: Db, f: AdminDeliveryRowFilter, page: { limit: number; offset: number }): Promise<{ rows: AdminDeliveryRow[]; total: number }> {
  let q = fromDeliveries(db);
  if (f.brandId !== undefined) q = q.where('d.brand_id', '=', f.brandId);
  if (f.brandIds) q = q.where('d.brand_id', 'in', scopeParam(f.brandIds));
  if (f.mode) q = q.where('d.mode', '=', f.mode);
  if (f.status) q = q.where('d.status', '=', f.status);
  if (f.event) q = q.where('e.event', '=', f.event);
  // Whole UTC days, computed by the database from the date text.
  if (f.from) q = q.where('d.created_at', '>=', utcDayStart(f.from));
  if (f.to) q = q.where('d.created_at', '<', utcDayAfter(f.to));
  const { n } = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q.select(ADMIN_COLUMNS).orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}
