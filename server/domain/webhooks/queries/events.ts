import { sql } from 'kysely';
import type { Mode, WebhookEventName } from '../../../../contract/vocabulary.ts';
import type { Db } from '../../db.ts';

// The statements of the events feed, the delivery settings and the delivery sweep.

/**
 * The brand's events of one mode (of `types` when given; an empty list matches
 * none): the newest `limit` oldest first when `after` is null, else the first
 * `limit` after that id.
 */
export async function selectFeedPage(db: Db, q: { brandId: number; mode: Mode; after: number | null; limit: number; types: WebhookEventName[] | null }) {
  let sel = db
    .selectFrom('webhook_events')
    .select(['id', 'public_id', 'event', 'created_at', 'mode', 'is_test', 'payload'])
    .where('brand_id', '=', q.brandId)
    .where('mode', '=', q.mode);
  if (q.types) sel = sel.where('event', 'in', q.types.length ? q.types : ['' as WebhookEventName]);
  if (q.after === null) return sel.orderBy('id', 'desc').limit(q.limit).execute().then((rows) => rows.reverse());
  return sel.where('id', '>', q.after).orderBy('id').limit(q.limit).execute();
}

/** The id of the brand's newest event of the mode, of any type. */
export async function selectLatestEventId(db: Db, brandId: number, mode: Mode) {
  const latest = await db.selectFrom('webhook_events').select((eb) => eb.fn.max('id').as('id')).where('brand_id', '=', brandId).where('mode', '=', mode).executeTakeFirst();
  return latest?.id ?? null;
}

/** The stored values of these service-wide settings. */
export async function selectSettings(db: Db, keys: readonly string[]) {
  return db.selectFrom('settings').select(['key', 'value']).where('key', 'in', [...keys]).execute();
}

/**
 * Up to `limit` due deliveries (pending or retrying, due `graceMs` ago) with no
 * live lease, oldest due first.
 */
export async function selectDueUnleased(db: Db, graceMs: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', 'in', ['pending', 'retrying'])
    .where('next_attempt_at', '<=', sql<Date>`now() - (${graceMs} * interval '1 millisecond')`)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
