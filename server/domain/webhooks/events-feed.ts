import type { Mode } from '../../../contract/common/mode.ts';
import type { WebhookEventName } from '../../../contract/events.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { toDateStrict } from './rows.ts';

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

interface FeedRow {
  id: string;
  public_id: string;
  event: WebhookEventName;
  created_at: string | Date;
  mode: Mode;
  is_test: boolean;
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

async function page(em: EntityManager, q: FeedQuery): Promise<FeedRow[]> {
  const types = q.types ? JSON.stringify(q.types) : null;
  if (q.after === null) {
    // The newest `limit`, returned oldest first, so a new reader starts at "now".
    const rows = await em.execute<FeedRow[]>(
      `SELECT id, public_id, event, created_at, mode, is_test, payload FROM webhook_events
        WHERE brand_id = ? AND mode = ? AND (?::jsonb IS NULL OR event IN (SELECT jsonb_array_elements_text(?::jsonb)))
        ORDER BY id DESC LIMIT ?`,
      [q.brandId, q.mode, types, types, q.limit],
    );
    return rows.reverse();
  }
  return em.execute<FeedRow[]>(
    `SELECT id, public_id, event, created_at, mode, is_test, payload FROM webhook_events
      WHERE brand_id = ? AND mode = ? AND id > ? AND (?::jsonb IS NULL OR event IN (SELECT jsonb_array_elements_text(?::jsonb)))
      ORDER BY id LIMIT ?`,
    [q.brandId, q.mode, q.after, types, types, q.limit],
  );
}

/**
 * The brand's events of one mode after a cursor (the internal event id), oldest
 * first. With `waitSeconds` and a cursor, polls until an event arrives, the wait
 * ends or the caller leaves; an event commits with the change that caused it, so
 * a reader never sees one whose change rolled back.
 */
export async function listEvents(em: EntityManager, q: FeedQuery): Promise<{ events: FeedEvent[]; nextCursor: string }> {
  const deadline = Date.now() + q.waitSeconds * 1000;
  let rows = await page(em, q);
  while (rows.length === 0 && q.after !== null && Date.now() < deadline && !q.signal?.aborted) {
    await sleep(Math.min(POLL_MS, deadline - Date.now()), q.signal);
    if (q.signal?.aborted) break;
    rows = await page(em, q);
  }
  let nextCursor = rows.length ? rows[rows.length - 1]!.id : q.after === null ? null : String(q.after);
  if (nextCursor === null) {
    // No matching event yet: start after the newest of any type, so the next read waits for new ones only.
    const [latest] = await em.execute<Array<{ id: string | null }>>('SELECT max(id) AS id FROM webhook_events WHERE brand_id = ? AND mode = ?', [q.brandId, q.mode]);
    nextCursor = String(latest?.id ?? '0');
  }
  return {
    events: rows.map((r) => ({ id: r.public_id, event: r.event, createdAt: toDateStrict(r.created_at), mode: r.mode, test: r.is_test, payload: r.payload })),
    nextCursor: String(nextCursor),
  };
}
