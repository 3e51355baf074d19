import type { Mode, WebhookEventName } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';

/** How often a waiting request looks again; a dev tool's latency, one indexed query each. */
const POLL_MS = 250;

export interface FeedEvent {
  id: string;
  event: WebhookEventName;
  createdAt: Date;
  mode: Mode;
  test: boolean;
  payload: string;
}

export interface FeedQuery {
  brandId: number;
  mode: Mode;
  /** null: start from the newest events. */
  after: number | null;
  limit: number;
  waitSeconds: number;
  types: WebhookEventName[] | null;
  /** Aborted when the caller went away: stop waiting. */
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

function page(em: Db, q: FeedQuery) {
  let sel = em
    .selectFrom('webhook_events')
    .select(['id', 'public_id', 'event', 'created_at', 'mode', 'is_test', 'payload'])
    .where('brand_id', '=', q.brandId)
    .where('mode', '=', q.mode);
  if (q.types) sel = sel.where('event', 'in', q.types.length ? q.types : ['' as WebhookEventName]);
  // The newest `limit`, returned oldest first, so a new reader starts at "now".
  if (q.after === null) return sel.orderBy('id', 'desc').limit(q.limit).execute().then((rows) => rows.reverse());
  return sel.where('id', '>', q.after).orderBy('id').limit(q.limit).execute();
}

/**
 * The brand's events of one mode after a cursor (the internal event id), oldest
 * first. With `waitSeconds` and a cursor, polls until an event arrives, the wait
 * ends or the caller leaves; an event commits with the change that caused it, so
 * a reader never sees one whose change rolled back.
 */
export async function listEvents(em: Db, q: FeedQuery): Promise<{ events: FeedEvent[]; nextCursor: string }> {
  const deadline = Date.now() + q.waitSeconds * 1000;
  let rows = await page(em, q);
  while (rows.length === 0 && q.after !== null && Date.now() < deadline && !q.signal?.aborted) {
    await sleep(Math.min(POLL_MS, deadline - Date.now()), q.signal);
    if (q.signal?.aborted) break;
    rows = await page(em, q);
  }
  let nextCursor = rows.length ? String(rows[rows.length - 1]!.id) : q.after === null ? null : String(q.after);
  if (nextCursor === null) {
    // No matching event yet: start after the newest of any type, so the next read waits for new ones only.
    const latest = await em
      .selectFrom('webhook_events')
      .select((eb) => eb.fn.max('id').as('id'))
      .where('brand_id', '=', q.brandId)
      .where('mode', '=', q.mode)
      .executeTakeFirst();
    nextCursor = String(latest?.id ?? '0');
  }
  return {
    events: rows.map((r) => ({ id: r.public_id, event: r.event, createdAt: r.created_at, mode: r.mode, test: r.is_test, payload: r.payload })),
    nextCursor: String(nextCursor),
  };
}
