import { AppError } from '../../../contract/common/errors.ts';
import type { Mode, WebhookEventName } from '../../../contract/vocabulary.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { type Db } from '../db.ts';
import type { DeliveryStatus } from './entities.ts';
import { getDelivery, replayDeadLetter, replayDeadLetters, toAttemptResource, type AttemptResource } from './deliveries.ts';
import { sendTestEvent } from './test-events.ts';
import { selectAdminDelivery, selectAdminDeliveryPage, type AdminDeliveryRow, type AdminDeliveryRowFilter } from './queries/deliveries.ts';
import { getAdminBrand } from '../brands/admin.ts';

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
  mode: Mode;
  livemode: boolean;
  test: boolean;
}

export type AdminAttempt = AttemptResource;

type Row = AdminDeliveryRow;

function toDelivery(r: Row): AdminDelivery {
  return {
    id: r.id,
    brand_id: r.brand_id,
    endpoint_id: r.endpoint_id,
    event_id: r.public_id,
    transaction_id: r.transaction_id,
    event: r.event,
    url: r.url,
    payload: r.payload,
    response_status: r.response_status,
    response_body: r.response_body,
    attempts: r.attempts,
    status: r.status,
    last_error: r.last_error,
    next_attempt_at: r.next_attempt_at?.toISOString() ?? null,
    last_attempt_at: r.last_attempt_at?.toISOString() ?? null,
    delivered_at: r.delivered_at?.toISOString() ?? null,
    dead_lettered_at: r.dead_lettered_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    mode: r.mode,
    livemode: r.mode === 'live',
    test: r.is_test,
  };
}

async function loadDelivery(em: Db, deliveryId: number): Promise<AdminDelivery> {
  const row = await selectAdminDelivery(em, deliveryId);
  if (!row) throw new AppError('DELIVERY_NOT_FOUND');
  return toDelivery(row);
}

export type DeliveryFilter = AdminDeliveryRowFilter & { page: number; perPage: number };

/** Every brand's deliveries, or one brand's, newest first. */
export async function listAdminDeliveries(em: Db, f: DeliveryFilter): Promise<{ items: AdminDelivery[]; total: number }> {
  const { rows, total } = await selectAdminDeliveryPage(em, f, { limit: f.perPage, offset: (f.page - 1) * f.perPage });
  return { items: rows.map(toDelivery), total };
}

/** One delivery with every attempt, oldest first. */
export async function getAdminDelivery(em: Db, deliveryId: number): Promise<AdminDelivery & { attempt_log: AdminAttempt[] }> {
  const delivery = await loadDelivery(em, deliveryId);
  const { attemptLog } = await getDelivery(em, null, deliveryId);
  return {
    ...delivery,
    attempt_log: attemptLog.map(toAttemptResource),
  };
}

/** Puts one dead letter back to `pending` and records it, in one transaction. */
export async function replayDeliveryAudited(em: Db, who: AuditActor, deliveryId: number): Promise<AdminDelivery> {
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
  em: Db,
  who: AuditActor,
  input: { brandId: number; event: WebhookEventName; mode: Mode },
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
  em: Db,
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
