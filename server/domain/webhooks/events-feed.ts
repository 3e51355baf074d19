import type { Mode, WebhookEventName } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';
import { selectFeedPage, selectLatestEventId } from './queries/events.ts';

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
  // The newest `limit`, returned oldest first, so a new reader starts at "now".
  return selectFeedPage(em, q);
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
    const latest = await selectLatestEventId(em, q.brandId, q.mode);
    nextCursor = String(latest ?? '0');
  }
  return {
    events: rows.map((r) => ({ id: r.public_id, event: r.event, createdAt: r.created_at, mode: r.mode, test: r.is_test, payload: r.payload })),
    nextCursor: String(nextCursor),
  };
}
