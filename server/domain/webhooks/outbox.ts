import { randomUUID } from 'node:crypto';
import type { Mode } from '../../../contract/common/mode.ts';
import { webhookEventSchemas, type WebhookEventName } from '../../../contract/events.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { enqueueDelivery } from './queue.ts';

export type { WebhookEventName };

type Row = Record<string, unknown>;

/**
 * Call inside the caller's em.transactional(): records the event, its delivery
 * row(s) and their pg-boss job(s) in that same transaction.
 *
 * The event is always stored, also when the brand has no endpoint, the endpoint
 * is disabled or not subscribed to this event (then without a delivery), so it
 * can be inspected or replayed later. `data` is checked against contract/events.ts:
 * a payload that breaks the published contract fails the caller's transaction
 * here rather than reaching merchants.
 */
export async function recordEvent(
  em: EntityManager,
  input: { brandId: number; mode: Mode; event: WebhookEventName; data: Record<string, unknown>; transactionId?: number | null; test?: boolean },
): Promise<{ eventId: number; deliveryId: number | null }> {
  if (!em.isInTransaction()) throw new Error('recordEvent must run inside em.transactional()');
  const createdAt = new Date();
  const publicId = `evt_${randomUUID().replaceAll('-', '')}`;
  const schema = webhookEventSchemas[input.event];
  if (!schema) throw new Error(`unknown webhook event ${String(input.event)}`);
  // `livemode` in the body (like Stripe): one endpoint receives both modes, and
  // a receiver must be able to tell a test event from a live one.
  const parsed = schema.safeParse({ id: publicId, event: input.event, created_at: createdAt.toISOString(), livemode: input.mode === 'live', data: input.data });
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`${input.event} data does not match contract/events.ts (${fields})`);
  }
  // Serialised once: retries and replays send exactly these bytes, so a signature
  // a receiver stored for an id always matches the body it got for that id.
  const payload = JSON.stringify(parsed.data);

  const [eventRow] = await em.execute<Row[]>(
    `INSERT INTO webhook_events (public_id, brand_id, mode, event, transaction_id, payload, created_at, is_test)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id, mode`,
    [publicId, input.brandId, input.mode, input.event, input.transactionId ?? null, payload, createdAt, input.test === true],
  );
  // The database derives an event's mode from its transaction; the body must say the same.
  if (eventRow!.mode !== input.mode) throw new Error(`${input.event} recorded as ${input.mode} for a ${String(eventRow!.mode)} transaction`);
  const eventId = Number(eventRow!.id);

  // FOR SHARE: an endpoint change (PUT) committing between this read and our
  // insert would otherwise leave a delivery for a URL or event set that was just
  // replaced; the lock orders the two transactions instead.
  // A test event goes to the endpoint whatever it subscribed to: the merchant asked for it.
  const [endpoint] = await em.execute<Row[]>(
    `SELECT id, url FROM webhook_endpoints
      WHERE brand_id = ? AND enabled AND (? OR ? = ANY(events))
      FOR SHARE`,
    [input.brandId, input.test === true, input.event],
  );
  if (!endpoint) return { eventId, deliveryId: null };

  const [delivery] = await em.execute<Row[]>(
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, brand_id, url, status, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'pending', ?, ?, ?) RETURNING id`,
    [eventId, Number(endpoint.id), input.brandId, endpoint.url, createdAt, createdAt, createdAt],
  );
  await enqueueDelivery(em, Number(delivery!.id));
  return { eventId, deliveryId: Number(delivery!.id) };
}
