import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Mode, WebhookEventName } from '../../../contract/vocabulary.ts';
import { webhookEventSchemas } from '../../../contract/events.ts';
import { prepared, preparedPerRowCount, rawStatement, transaction, type Db } from '../db.ts';
import type { BoundStatement } from '../../infra/database/convert-values.ts';
import { bindDeliveryJobs, enqueueDelivery } from './queue.ts';

export type { WebhookEventName };

/**
 * The endpoints one transaction already read (and holds FOR SHARE) per brand,
 * mode and event: a caller recording many events of one brand in one
 * transaction (a batch of SMS completing payments) passes the same map, and the
 * endpoints are read once. Locked, they cannot change before it commits.
 */
export type EventEndpointsMemo = Map<string, Array<{ id: number; url: string }>>;

/** An event's key in EventEndpointsMemo. */
const memoKeyOf = (input: { brandId: number; mode: Mode; event: WebhookEventName }) => `${input.brandId}:${input.mode}:${input.event}`;

/**
 * Call inside the caller's transaction(em, ): records the event, its delivery
 * row(s) and their pg-boss job(s) in that same transaction.
 *
 * The event is always stored, also when no endpoint of the brand takes it (then
 * without a delivery), so it can be inspected, listed by `GET /api/v1/events`
 * (and so reach `listen`) or replayed later. `data` is checked against contract/events.ts:
 * a payload that breaks the published contract fails the caller's transaction
 * here rather than reaching merchants.
 */
export async function recordEvent(
  em: Db,
  input: {
    brandId: number;
    mode: Mode;
    event: WebhookEventName;
    data: Record<string, unknown>;
    transactionId?: number | null;
    /** A test event: delivered to `endpointId` only. */
    test?: boolean;
    endpointId?: number;
  },
  memo?: EventEndpointsMemo,
): Promise<{ eventId: number; deliveryId: number | null; deliveryIds: number[] }> {
  if (!em.isTransaction) throw new Error('recordEvent must run inside transaction(em, )');
  const createdAt = new Date();
  const publicId = `evt_${randomUUID().replaceAll('-', '')}`;
  const payload = eventPayload(input, publicId, createdAt);

  const eventRow = await em
    .insertInto('webhook_events')
    .values({ public_id: publicId, brand_id: input.brandId, mode: input.mode, event: input.event, transaction_id: input.transactionId ?? null, payload, created_at: createdAt, is_test: input.test === true })
    .returning(['id', 'mode'])
    .executeTakeFirstOrThrow();
  // The database derives an event's mode from its transaction; the body must say the same.
  if (eventRow.mode !== input.mode) throw new Error(`${input.event} recorded as ${input.mode} for a ${eventRow.mode} transaction`);
  const eventId = eventRow.id;

  // Fan-out: one delivery per enabled endpoint of the brand that takes this
  // event's mode (its own mode, or NULL: both) and subscribed to the event, each
  // later signed with that endpoint's own secret. A test event goes only to the
  // endpoint it was sent to, whatever that one subscribed to: the merchant asked.
  // FOR SHARE: an endpoint change committing between this read and our inserts
  // would otherwise leave a delivery for a URL or event set that was just
  // replaced; the lock orders the two transactions instead (id order: no deadlock).
  const target = input.test === true ? (input.endpointId ?? null) : null;
  if (input.test === true && target === null) throw new Error('a test event names the endpoint it is sent to');
  const endpoints = await eventEndpoints(em, input, target, memo);
  if (endpoints.length === 0) return { eventId, deliveryId: null, deliveryIds: [] };

  const deliveries = await em
    .insertInto('webhook_deliveries')
    .values(endpoints.map((ep) => ({ event_id: eventId, endpoint_id: ep.id, brand_id: input.brandId, url: ep.url, status: 'pending' as const, next_attempt_at: createdAt, created_at: createdAt, updated_at: createdAt })))
    .returning('id')
    .execute();
  const deliveryIds = deliveries.map((d) => d.id).sort((a, b) => a - b);
  for (const id of deliveryIds) await enqueueDelivery(em, id);
  return { eventId, deliveryId: deliveryIds[0] ?? null, deliveryIds };
}

interface EventRow {
  public_id: string;
  brand_id: number;
  mode: Mode;
  event: WebhookEventName;
  transaction_id: number;
  payload: string;
  created_at: Date;
  is_test: boolean;
}
/** EventRow's columns, in its order (the INSERT's column list). */
const EVENT_COLUMNS = ['public_id', 'brand_id', 'mode', 'event', 'transaction_id', 'payload', 'created_at', 'is_test'] as const satisfies ReadonlyArray<keyof EventRow>;

/**
 * The database derives an event's mode from its transaction; its body's `livemode` must
 * say the same. As SQL over the inserted row `e` (a table name or alias): true, or an
 * error (check_invariant), so that a statement that may go with the COMMIT checks itself.
 */
const modeCheck = (e: string) =>
  `check_invariant((${e}.payload::jsonb ->> 'livemode')::boolean = (${e}.mode = 'live'), ${e}.event || ' ' || ${e}.public_id || ' says livemode ' || (${e}.payload::jsonb ->> 'livemode') || ' for a ' || ${e}.mode || ' transaction')`;

/** recordEvents' INSERT, compiled once per event count (db.ts `preparedPerRowCount`): the statement the builder wrote. */
const insertEvents = preparedPerRowCount(EVENT_COLUMNS, (k, rows: EventRow[]) =>
  k
    .insertInto('webhook_events')
    .values(rows)
    .returning(['id', 'mode', 'public_id'])
    // Checked in the statement (bindEventsAhead sends it with the COMMIT); recordEvents checks the mode returned too.
    .returning(sql<boolean>`${sql.raw(modeCheck('webhook_events'))}`.as('mode_checked')),
);

/** An event of recordEvents and bindEventsAhead: its payment's transaction and the event's data. */
type EventInput = { brandId: number; mode: Mode; event: WebhookEventName; data: Record<string, unknown>; transactionId: number };

/** recordEvents' rows of webhook_events, each with its public id and its body (eventPayload). */
function eventRows(inputs: ReadonlyArray<EventInput>, createdAt: Date): EventRow[] {
  return inputs.map((input) => {
    const publicId = `evt_${randomUUID().replaceAll('-', '')}`;
    return { public_id: publicId, brand_id: input.brandId, mode: input.mode, event: input.event, transaction_id: input.transactionId, payload: eventPayload(input, publicId, createdAt), created_at: createdAt, is_test: false };
  });
}

/**
 * recordEvent for several events in one statement each: the events in one
 * INSERT, the endpoints of each brand, mode and event read once (FOR SHARE, in
 * id order, through `memo`), the deliveries of all events in one INSERT, each
 * delivery's job enqueued as recordEvent does. For a batch of SMS completing
 * payments in one transaction (sms/service.ts). The same checks: each payload
 * against contract/events.ts, each stored mode against the one given.
 */
export async function recordEvents(
  em: Db,
  inputs: ReadonlyArray<EventInput>,
  memo: EventEndpointsMemo = new Map(),
): Promise<void> {
  if (inputs.length === 0) return;
  if (!em.isTransaction) throw new Error('recordEvents must run inside transaction(em, )');
  const createdAt = new Date();
  const events = eventRows(inputs, createdAt);
  const stored = new Map((await insertEvents(em, events)).map((r) => [r.public_id, r]));
  const fanOut: Array<{ eventId: number; endpoints: Array<{ id: number; url: string }>; brandId: number }> = [];
  for (const [i, input] of inputs.entries()) {
    const row = stored.get(events[i]!.public_id)!;
    if (row.mode !== input.mode) throw new Error(`${input.event} recorded as ${input.mode} for a ${row.mode} transaction`);
    const endpoints = await eventEndpoints(em, input, null, memo);
    if (endpoints.length > 0) fanOut.push({ eventId: row.id, endpoints, brandId: input.brandId });
  }
  if (fanOut.length === 0) return;
  const deliveries = await em
    .insertInto('webhook_deliveries')
    .values(fanOut.flatMap(({ eventId, endpoints, brandId }) => endpoints.map((ep) => ({ event_id: eventId, endpoint_id: ep.id, brand_id: brandId, url: ep.url, status: 'pending' as const, next_attempt_at: createdAt, created_at: createdAt, updated_at: createdAt }))))
    .returning(['id', 'event_id'])
    .execute();
  // Per event in the order recorded, each event's deliveries in id order: as recordEvent enqueues them.
  const order = new Map(fanOut.map((f, i) => [f.eventId, i]));
  for (const d of [...deliveries].sort((a, b) => order.get(a.event_id)! - order.get(b.event_id)! || a.id - b.id)) await enqueueDelivery(em, d.id);
}

/**
 * Events and their deliveries in one statement, the deliveries with ids taken
 * before (reserveDeliveryIds). Raw SQL: the typed builder cannot declare
 * json_to_recordset's column definition lists (the events and the deliveries
 * as tables).
 */
const insertEventsWithDeliveries = rawStatement<{ id: string }>(
  `WITH e AS (
     INSERT INTO webhook_events (public_id, brand_id, mode, event, transaction_id, payload, created_at, is_test)
     SELECT v.public_id, v.brand_id, v.mode, v.event, v.transaction_id, v.payload, v.created_at, false
       FROM json_to_recordset($1::json) AS v(n integer, public_id text, brand_id bigint, mode text, event text, transaction_id bigint, payload text, created_at timestamptz)
      ORDER BY v.n
     RETURNING id, public_id, mode, event, payload),
   checked AS (SELECT e.id, e.public_id, ${modeCheck('e')} AS ok FROM e)
   INSERT INTO webhook_deliveries (id, event_id, endpoint_id, brand_id, url, status, next_attempt_at, created_at, updated_at)
   SELECT d.id, c.id, d.endpoint_id, d.brand_id, d.url, 'pending', d.at, d.at, d.at
     FROM json_to_recordset($2::json) AS d(id bigint, public_id text, endpoint_id bigint, brand_id bigint, url text, at timestamptz)
     JOIN checked c ON c.public_id = d.public_id
    -- Every event checked, also one without a delivery (an InitPlan, run once over all of them).
    WHERE (SELECT bool_and(c2.ok) FROM checked c2)
    ORDER BY d.id
   RETURNING id`,
);

/**
 * Delivery ids taken ahead, for events a caller may record later in its
 * transaction (bindEventsAhead): for each input, one per endpoint that would
 * take its event, counted as eventEndpoints finds them. Sent after the
 * endpoints' read (endpointsToRead), which holds them FOR SHARE: none can go
 * meanwhile. Ids left unused are gaps in the sequence, as a rolled-back insert
 * leaves. Raw SQL: the inputs as a table (json_to_recordset) and nextval over
 * the identity's sequence, which the builder has no call for.
 */
const reserveIds = rawStatement<{ id: string }>(
  `SELECT nextval(pg_get_serial_sequence('webhook_deliveries', 'id'))::text AS id
     FROM json_to_recordset($1::json) AS k(brand_id bigint, mode text, event text)
     JOIN webhook_endpoints ep ON ep.brand_id = k.brand_id AND ep.enabled AND (ep.mode IS NULL OR ep.mode = k.mode) AND k.event = ANY(ep.events)`,
);

export function reserveDeliveryIds(inputs: ReadonlyArray<{ brandId: number; mode: Mode; event: WebhookEventName }>): { statement: BoundStatement<{ id: string }>; ids(rows: ReadonlyArray<{ id: string }>): number[] } {
  return {
    statement: reserveIds.bind([JSON.stringify(inputs.map((i) => ({ brand_id: i.brandId, mode: i.mode, event: i.event })))]),
    ids: (rows) => rows.map((r) => Number(r.id)).sort((a, b) => a - b),
  };
}

/**
 * recordEvents' events, deliveries and jobs as statements to send with the
 * COMMIT (db.ts `sendWithCommit`), for a caller that holds each event's
 * endpoints in `memo` (read with endpointsToRead) and delivery ids reserved for
 * them (reserveDeliveryIds); null when it does not (then recordEvents). The
 * same rows, in the same order, and the same checks: each payload against
 * contract/events.ts here, each stored mode against its body in the statement.
 */
export async function bindEventsAhead(
  em: Db,
  inputs: ReadonlyArray<EventInput>,
  memo: EventEndpointsMemo,
  reserved: readonly number[],
): Promise<Array<BoundStatement<unknown>> | null> {
  if (inputs.length === 0) return null;
  const endpointsOf = inputs.map((input) => memo.get(memoKeyOf(input)));
  if (endpointsOf.some((e) => e === undefined)) return null;
  const createdAt = new Date();
  const rows = eventRows(inputs, createdAt);
  // Per event in the order recorded, each event's deliveries in endpoint id order, ids ascending: as recordEvents.
  const deliveries = rows.flatMap((row, i) => endpointsOf[i]!.map((ep) => ({ public_id: row.public_id, endpoint_id: ep.id, brand_id: row.brand_id, url: ep.url, at: createdAt })));
  if (deliveries.length === 0) return [insertEvents.bind(em, rows)];
  if (deliveries.length > reserved.length) return null;
  const withIds = deliveries.map((d, i) => ({ id: reserved[i]!, ...d }));
  return [
    insertEventsWithDeliveries.bind([JSON.stringify(rows.map((r, n) => ({ n, ...r }))), JSON.stringify(withIds)]),
    await bindDeliveryJobs(em, withIds.map((d) => d.id)),
  ];
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
 * The subscribed endpoints of `inputs`' events that `memo` does not hold yet, as
 * statements for a caller to send along with others (db.ts `pipelined`) before
 * recording the events; `remember` puts their answers into `memo`, where
 * recordEvents then finds them. The same statement and locks as eventEndpoints.
 */
export function endpointsToRead(
  em: Db,
  inputs: ReadonlyArray<{ brandId: number; mode: Mode; event: WebhookEventName }>,
  memo: EventEndpointsMemo,
): { statements: Array<BoundStatement<{ id: number; url: string }>>; remember(answers: ReadonlyArray<Array<{ id: number; url: string }>>): void } {
  const wanted = new Map<string, { brandId: number; mode: Mode; event: WebhookEventName }>();
  for (const input of inputs) {
    const key = memoKeyOf(input);
    if (!memo.has(key) && !wanted.has(key)) wanted.set(key, input);
  }
  const keys = [...wanted.keys()];
  return {
    statements: [...wanted.values()].map((input) => subscribedEndpoints.bind(em, { brandId: input.brandId, mode: input.mode, event: input.event, target: 0 })),
    remember: (answers) => keys.forEach((key, i) => memo.set(key, answers[i]!)),
  };
}

/**
 * The endpoints an event fans out to (recordEvent says which and why FOR SHARE, in
 * id order): the brand's enabled ones of the event's mode subscribed to it, or,
 * for a test event, its `target` alone. Subscribed endpoints are read once per
 * transaction through `memo` when one is given.
 */
async function eventEndpoints(
  em: Db,
  input: { brandId: number; mode: Mode; event: WebhookEventName },
  target: number | null,
  memo: EventEndpointsMemo | undefined,
): Promise<Array<{ id: number; url: string }>> {
  const memoKey = target === null ? memoKeyOf(input) : null;
  const known = memoKey !== null ? memo?.get(memoKey) : undefined;
  if (known) return known;
  const endpoints = await (target === null ? subscribedEndpoints : targetEndpoint).execute(em, { brandId: input.brandId, mode: input.mode, event: input.event, target: target ?? 0 });
  if (memo && memoKey !== null) memo.set(memoKey, endpoints);
  return endpoints;
}
