import { AppError } from '../../../contract/common/errors.ts';
import type { WebhookEventName } from '../../../contract/events.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { pgDate, pgDateOrNull } from '../../infra/database/pg-date.ts';
import type { DeliveryStatus } from '../webhooks/entities.ts';
import { getDelivery, replayDeadLetter, replayDeadLetters, toAttemptResource, type AttemptResource } from '../webhooks/deliveries.ts';
import { sendTestEvent } from '../webhooks/test-events.ts';
import { getAdminBrand } from './brands.ts';
import { scopeParam } from '../brands/scope.ts';

export interface AdminDelivery {
  id: number;
  brand_id: number;
  /** Null once the endpoint was deleted. */
  endpoint_id: number | null;
  event_id: string;
  transaction_id: number | null;
  event: WebhookEventName;
  url: string;
  payload: string;
  response_status: number | null;
  response_body: string | null;
  attempts: number;
  status: DeliveryStatus;
  last_error: string | null;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  dead_lettered_at: string | null;
  created_at: string;
  mode: 'live' | 'test';
  livemode: boolean;
  test: boolean;
}

export type AdminAttempt = AttemptResource;

type Row = Record<string, any>;

const iso = (v: string | Date | null) => pgDateOrNull(v)?.toISOString() ?? null;

const SELECT = `
  SELECT d.id, d.brand_id, d.endpoint_id, e.public_id, e.transaction_id, e.event, d.url, e.payload, d.response_status, d.response_body, d.attempts,
         d.status, d.last_error, d.next_attempt_at, d.last_attempt_at, d.delivered_at, d.dead_lettered_at, d.created_at,
         e.mode, e.is_test
    FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`;

function toDelivery(r: Row): AdminDelivery {
  return {
    id: Number(r.id),
    brand_id: Number(r.brand_id),
    endpoint_id: r.endpoint_id === null ? null : Number(r.endpoint_id),
    event_id: r.public_id,
    transaction_id: r.transaction_id === null ? null : Number(r.transaction_id),
    event: r.event,
    url: r.url,
    payload: r.payload,
    response_status: r.response_status,
    response_body: r.response_body,
    attempts: r.attempts,
    status: r.status,
    last_error: r.last_error,
    next_attempt_at: iso(r.next_attempt_at),
    last_attempt_at: iso(r.last_attempt_at),
    delivered_at: iso(r.delivered_at),
    dead_lettered_at: iso(r.dead_lettered_at),
    created_at: pgDate(r.created_at).toISOString(),
    mode: r.mode,
    livemode: r.mode === 'live',
    test: r.is_test,
  };
}

async function loadDelivery(em: EntityManager, deliveryId: number): Promise<AdminDelivery> {
  const [row] = await em.execute<Row[]>(`${SELECT} WHERE d.id = ?`, [deliveryId]);
  if (!row) throw new AppError('DELIVERY_NOT_FOUND');
  return toDelivery(row);
}

export interface DeliveryFilter {
  page: number;
  perPage: number;
  brandId?: number;
  /** A console operator's brands; absent or null: every brand. */
  brandIds?: number[] | null;
  mode?: 'live' | 'test';
  status?: DeliveryStatus;
  event?: WebhookEventName;
  /** Inclusive UTC dates, `YYYY-MM-DD`. */
  from?: string;
  to?: string;
}

/** Every brand's deliveries, or one brand's, newest first. */
export async function listAdminDeliveries(em: EntityManager, f: DeliveryFilter): Promise<{ items: AdminDelivery[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    where.push(sql);
    params.push(value);
  };
  if (f.brandId !== undefined) add('d.brand_id = ?', f.brandId);
  if (f.brandIds) add('d.brand_id IN (?)', scopeParam(f.brandIds));
  if (f.mode) add('d.mode = ?', f.mode);
  if (f.status) add('d.status = ?', f.status);
  if (f.event) add('e.event = ?', f.event);
  if (f.from) add("d.created_at >= (?::date)::timestamp AT TIME ZONE 'UTC'", f.from);
  if (f.to) add("d.created_at < ((?::date + 1)::timestamp AT TIME ZONE 'UTC')", f.to);
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const [count] = await em.execute<Array<{ n: string }>>(
    `SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id ${clause}`,
    params,
  );
  const rows = await em.execute<Row[]>(`${SELECT} ${clause} ORDER BY d.created_at DESC, d.id DESC LIMIT ? OFFSET ?`, [
    ...params,
    f.perPage,
    (f.page - 1) * f.perPage,
  ]);
  return { items: rows.map(toDelivery), total: Number(count!.n) };
}

/** One delivery with every attempt, oldest first. */
export async function getAdminDelivery(em: EntityManager, deliveryId: number): Promise<AdminDelivery & { attempt_log: AdminAttempt[] }> {
  const delivery = await loadDelivery(em, deliveryId);
  const { attemptLog } = await getDelivery(em, null, deliveryId);
  return {
    ...delivery,
    attempt_log: attemptLog.map(toAttemptResource),
  };
}

/** Puts one dead letter back to `pending` and records it, in one transaction. */
export async function replayDeliveryAudited(em: EntityManager, who: AuditActor, deliveryId: number): Promise<AdminDelivery> {
  return withAudit(em, who, async (tx) => {
    const before = await loadDelivery(tx, deliveryId);
    await replayDeadLetter(tx, deliveryId);
    const after = await loadDelivery(tx, deliveryId);
    return {
      result: after,
      audit: {
        action: 'webhook_delivery.replay',
        targetType: 'webhook_delivery',
        targetId: deliveryId,
        brandId: after.brand_id,
        before: { status: before.status, attempts: before.attempts, event_id: before.event_id },
        after: { status: after.status, attempts: after.attempts, event_id: after.event_id },
      },
    };
  });
}

/** A signed sample event to the brand's endpoint (webhooks/test-events.ts), recorded in the audit log. */
export async function sendTestEventAudited(
  em: EntityManager,
  who: AuditActor,
  input: { brandId: number; event: WebhookEventName; mode: 'live' | 'test' },
): Promise<AdminDelivery> {
  return withAudit(em, who, async (tx) => {
    await getAdminBrand(tx, input.brandId);
    const sent = await sendTestEvent(tx, input);
    const after = await loadDelivery(tx, sent.id);
    return {
      result: after,
      audit: {
        action: 'webhook.test_event',
        targetType: 'webhook_delivery',
        targetId: sent.id,
        brandId: input.brandId,
        after: { event: input.event, mode: input.mode, event_id: after.event_id },
      },
    };
  });
}

/** Replays every dead letter since `since` (optionally one brand's) and records the counts. */
export async function replayDeadLettersAudited(
  em: EntityManager,
  who: AuditActor,
  input: { since: Date; brandId?: number },
): Promise<{ replayed: number; skipped_disabled: number }> {
  return withAudit(em, who, async (tx) => {
    if (input.brandId !== undefined) await getAdminBrand(tx, input.brandId);
    const { replayed, skippedDisabled } = await replayDeadLetters(tx, { since: input.since, brandId: input.brandId });
    return {
      result: { replayed, skipped_disabled: skippedDisabled },
      audit:
        replayed === 0
          ? null
          : {
              action: 'webhook_delivery.replay_dead_letters',
              targetType: 'webhook_delivery',
              targetId: null,
              brandId: input.brandId ?? null,
              before: { status: 'dead_letter', since: input.since.toISOString() },
              after: { status: 'pending', replayed, skipped_disabled: skippedDisabled },
            },
    };
  });
}
