import type { Mode, WebhookEventName } from '../../../../contract/vocabulary.ts';
import { prepared, preparedPerRowCount, type Db } from '../../db.ts';

// The statements of the outbox: events, the endpoints they fan out to, and their deliveries.

/** An event as stored; `payload` is the JSON text of its body. */
export interface EventRow {
  public_id: string;
  brand_id: number;
  mode: Mode;
  event: WebhookEventName;
  transaction_id: number | null;
  payload: string;
  created_at: Date;
  is_test: boolean;
  /** Why the payment's own callback_url got no delivery; null otherwise. */
  callback_note: string | null;
}

/** EventRow's columns, in its order (the INSERT's column list). */
const EVENT_COLUMNS = ['public_id', 'brand_id', 'mode', 'event', 'transaction_id', 'payload', 'created_at', 'is_test', 'callback_note'] as const satisfies ReadonlyArray<keyof EventRow>;

/** insertEventRows' INSERT, compiled once per event count (db.ts `preparedPerRowCount`). */
const insertEvents = preparedPerRowCount(EVENT_COLUMNS, (k, rows: EventRow[]) => k.insertInto('webhook_events').values(rows).returning(['id', 'mode', 'public_id']));

/** Stores the events; each one's id and mode (the database derives a transaction's event's mode from the transaction). */
export async function insertEventRows(tx: Db, rows: EventRow[]) {
  return insertEvents(tx, rows);
}

/**
 * eventEndpoints' statement, compiled once per shape (db.ts `prepared`): the
 * endpoints subscribed to the event, or a test event's target.
 */
const endpointsStatement = (test: boolean) =>
  prepared((k, $: { brandId: number; mode: Mode; event: string; target: number }) =>
    k
      .selectFrom('webhook_endpoints')
      .select(['id', 'url'])
      .where('brand_id', '=', $.brandId)
      .where('enabled', '=', true)
      .where((eb) => eb.or([eb('mode', 'is', null), eb('mode', '=', $.mode)]))
      .where((eb) => (!test ? eb(eb.val<string>($.event), '=', eb.fn.any('events')) : eb('id', '=', $.target)))
      .orderBy('id')
      .forShare(),
  );
const subscribedEndpoints = endpointsStatement(false);
const targetEndpoint = endpointsStatement(true);

/**
 * The endpoints an event fans out to, locked FOR SHARE, in id order: the brand's
 * enabled ones of the event's mode subscribed to it, or, for a test event, its
 * `target` alone.
 */
export async function lockEventEndpoints(
  tx: Db,
  input: { brandId: number; mode: Mode; event: WebhookEventName },
  target: number | null,
): Promise<Array<{ id: number; url: string }>> {
  return (target === null ? subscribedEndpoints : targetEndpoint).execute(tx, { brandId: input.brandId, mode: input.mode, event: input.event, target: target ?? 0 });
}

/** Stores pending deliveries, due at `at`; each one's id and event. */
export async function insertPendingDeliveries(tx: Db, rows: ReadonlyArray<{ eventId: number; endpointId: number; brandId: number; url: string }>, at: Date) {
  return tx
    .insertInto('webhook_deliveries')
    .values(rows.map((r) => ({ event_id: r.eventId, endpoint_id: r.endpointId, brand_id: r.brandId, url: r.url, status: 'pending' as const, next_attempt_at: at, created_at: at, updated_at: at })))
    .returning(['id', 'event_id'])
    .execute();
}

/** The payments' own `callback_url`s (OwnPay's per-payment webhook URL), of those that have one. */
export async function selectCallbackUrls(tx: Db, brandId: number, paymentIds: readonly string[]) {
  if (paymentIds.length === 0) return [];
  return tx
    .selectFrom('payment_intents')
    .select(['uuid', 'callback_url'])
    .where('brand_id', '=', brandId)
    .where('uuid', '=', (eb) => eb.fn.any(eb.val([...paymentIds])))
    .where('callback_url', 'is not', null)
    .execute();
}

/** The brand's enabled endpoints taking `mode` whose URL is one of `urls`, locked FOR SHARE like the fan-out's, in id order. */
export async function lockEndpointsByUrl(tx: Db, brandId: number, mode: Mode, urls: readonly string[]) {
  if (urls.length === 0) return [];
  return tx
    .selectFrom('webhook_endpoints')
    .select(['id', 'url'])
    .where('brand_id', '=', brandId)
    .where('enabled', '=', true)
    .where((eb) => eb.or([eb('mode', 'is', null), eb('mode', '=', mode)]))
    .where('url', '=', (eb) => eb.fn.any(eb.val([...urls])))
    .orderBy('id')
    .forShare()
    .execute();
}
