import { randomUUID } from 'node:crypto';
import type { Mode, WebhookEventName } from '../../../contract/vocabulary.ts';
import { webhookEventSchemas } from '../../../contract/events.ts';
import { type Db } from '../db.ts';
import { insertEventRows, insertPendingDeliveries, lockEndpointsByUrl, lockEventEndpoints, selectCallbackUrls, type EventRow } from './queries/outbox.ts';
import { enqueueDeliveries } from './queue.ts';

export type { WebhookEventName };

/** An event to record: its brand, mode, name and data, and the transaction it is about (if any). */
export interface EventInput {
  brandId: number;
  mode: Mode;
  event: WebhookEventName;
  data: Record<string, unknown>;
  transactionId?: number | null;
  /** A test event: delivered to `endpointId` only. */
  test?: boolean;
  endpointId?: number;
}

/** What recordEvents stored for one event: its id and its deliveries' ids (ascending). */
export interface RecordedEvent {
  eventId: number;
  deliveryId: number | null;
  deliveryIds: number[];
}

/** recordEvents for one event. */
export async function recordEvent(em: Db, input: EventInput): Promise<RecordedEvent> {
  if (!em.isTransaction) throw new Error('recordEvent must run inside a transaction');
  return (await recordEvents(em, [input]))[0]!;
}

/**
 * Call inside the caller's transaction(): records the events, their
 * delivery rows and their pg-boss jobs in that same transaction, set-based: the
 * events in one INSERT, the endpoints of each brand, mode and event read once,
 * the deliveries of all events in one INSERT and their jobs in one.
 *
 * An event is always stored, also when no endpoint of the brand takes it (then
 * without a delivery), so it can be inspected, listed by `GET /api/v1/events`
 * (and so reach `listen`) or replayed later. `data` is checked against contract/events.ts:
 * a payload that breaks the published contract fails the caller's transaction
 * here rather than reaching merchants. Returns what was stored for each input, in order.
 */
export async function recordEvents(em: Db, inputs: ReadonlyArray<EventInput>): Promise<RecordedEvent[]> {
  if (inputs.length === 0) return [];
  if (!em.isTransaction) throw new Error('recordEvents must run inside a transaction');
  const createdAt = new Date();
  const callbacks = await callbackTargets(em, inputs);
  const events: EventRow[] = inputs.map((input, i) => {
    const publicId = `evt_${randomUUID().replaceAll('-', '')}`;
    return {
      public_id: publicId, brand_id: input.brandId, mode: input.mode, event: input.event, transaction_id: input.transactionId ?? null,
      payload: eventPayload(input, publicId, createdAt), created_at: createdAt, is_test: input.test === true,
      callback_note: callbacks[i]?.note ?? null,
    };
  });
  const stored = new Map((await insertEventRows(em, events)).map((r) => [r.public_id, r]));

  // Fan-out: one delivery per enabled endpoint of the brand that takes this
  // event's mode (its own mode, or NULL: both) and subscribed to the event, each
  // later signed with that endpoint's own secret. A test event goes only to the
  // endpoint it was sent to, whatever that one subscribed to: the merchant asked.
  // FOR SHARE: an endpoint change committing between this read and our inserts
  // would otherwise leave a delivery for a URL or event set that was just
  // replaced; the lock orders the two transactions instead (id order: no deadlock).
  const endpointsByKey = new Map<string, Array<{ id: number; url: string }>>();
  const fanOut: Array<{ eventId: number; endpoints: Array<{ id: number; url: string }>; brandId: number }> = [];
  const eventIds: number[] = [];
  for (const [i, input] of inputs.entries()) {
    const row = stored.get(events[i]!.public_id)!;
    // The database derives an event's mode from its transaction; the body must say the same.
    if (row.mode !== input.mode) throw new Error(`${input.event} recorded as ${input.mode} for a ${row.mode} transaction`);
    eventIds.push(row.id);
    const target = input.test === true ? (input.endpointId ?? null) : null;
    if (input.test === true && target === null) throw new Error('a test event names the endpoint it is sent to');
    const key = target === null ? `${input.brandId}:${input.mode}:${input.event}` : `test:${target}`;
    let endpoints = endpointsByKey.get(key);
    if (!endpoints) endpointsByKey.set(key, (endpoints = await lockEventEndpoints(em, input, target)));
    // The payment's own callback_url, when it is a registered endpoint not already receiving the event.
    const extra = callbacks[i]?.endpoint;
    const all = extra && !endpoints.some((e) => e.id === extra.id) ? [...endpoints, extra] : endpoints;
    if (all.length > 0) fanOut.push({ eventId: row.id, endpoints: all, brandId: input.brandId });
  }
  const deliveriesOf = new Map<number, number[]>();
  if (fanOut.length > 0) {
    const deliveries = await insertPendingDeliveries(
      em,
      fanOut.flatMap(({ eventId, endpoints, brandId }) => endpoints.map((ep) => ({ eventId, endpointId: ep.id, brandId, url: ep.url }))),
      createdAt,
    );
    for (const d of deliveries) deliveriesOf.set(d.event_id, [...(deliveriesOf.get(d.event_id) ?? []), d.id]);
    for (const ids of deliveriesOf.values()) ids.sort((a, b) => a - b);
    // Per event in the order recorded, each event's deliveries in id order.
    await enqueueDeliveries(em, eventIds.flatMap((id) => deliveriesOf.get(id) ?? []));
  }
  return eventIds.map((eventId) => {
    const deliveryIds = deliveriesOf.get(eventId) ?? [];
    return { eventId, deliveryId: deliveryIds[0] ?? null, deliveryIds };
  });
}

/**
 * The event's body, checked against contract/events.ts: a payload that breaks
 * the published contract fails the caller's transaction instead of reaching
 * merchants. Serialised once: retries and replays send exactly these bytes, so a
 * signature a receiver stored for an id always matches the body it got for it.
 */
function eventPayload(input: { mode: Mode; event: WebhookEventName; data: Record<string, unknown>; test?: boolean }, publicId: string, createdAt: Date): string {
  const schema = webhookEventSchemas[input.event];
  if (!schema) throw new Error(`unknown webhook event ${String(input.event)}`);
  // `livemode` in the body (like Stripe): an endpoint set through the singular
  // route receives both modes, and a receiver must tell a test event from a live one.
  // A sample event says so in its body (`test: true`), so a receiver never mistakes it for a real one.
  const parsed = schema.safeParse({ id: publicId, event: input.event, created_at: createdAt.toISOString(), livemode: input.mode === 'live', ...(input.test ? { test: true } : {}), data: input.data });
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`${input.event} data does not match contract/events.ts (${fields})`);
  }
  return JSON.stringify(parsed.data);
}

/** Why a payment's callback_url got no delivery (stored on the event, `callback_note`). */
export const UNREGISTERED_CALLBACK_NOTE =
  "not delivered to the payment's callback_url: it is not the URL of an enabled webhook endpoint of the brand for this mode (register it as an endpoint to receive deliveries there)";

/**
 * OwnPay's per-payment `callback_url`: a payment event is also delivered to the
 * brand's registered endpoint of exactly that URL (signed with that endpoint's
 * secret and signing), never to an unregistered URL, so the SSRF and signing
 * rules of endpoints hold for it; an unregistered one is noted on the event.
 */
async function callbackTargets(em: Db, inputs: ReadonlyArray<EventInput>): Promise<Array<{ endpoint?: { id: number; url: string }; note?: string } | undefined>> {
  const paymentIdOf = (input: EventInput) => (input.test !== true && input.event.startsWith('payment.') && typeof input.data.payment_id === 'string' ? input.data.payment_id : null);
  const groups = new Map<string, { brandId: number; mode: Mode; ids: Set<string> }>();
  for (const input of inputs) {
    const id = paymentIdOf(input);
    if (!id) continue;
    const k = `${input.brandId}:${input.mode}`;
    const g = groups.get(k) ?? { brandId: input.brandId, mode: input.mode, ids: new Set<string>() };
    g.ids.add(id);
    groups.set(k, g);
  }
  const found = new Map<string, { endpoint?: { id: number; url: string }; note?: string }>();
  for (const g of groups.values()) {
    const intents = await selectCallbackUrls(em, g.brandId, [...g.ids]);
    const endpoints = await lockEndpointsByUrl(em, g.brandId, g.mode, [...new Set(intents.map((r) => r.callback_url!))]);
    for (const r of intents) {
      const endpoint = endpoints.find((e) => e.url === r.callback_url);
      found.set(`${g.brandId}:${g.mode}:${r.uuid}`, endpoint ? { endpoint: { id: endpoint.id, url: endpoint.url } } : { note: UNREGISTERED_CALLBACK_NOTE });
    }
  }
  return inputs.map((input) => {
    const id = paymentIdOf(input);
    return id ? found.get(`${input.brandId}:${input.mode}:${id}`) : undefined;
  });
}
