import { sql } from 'kysely';
import type { Db } from '../db.ts';
import { scopeParam } from '../brands/scope.ts';
import type { AlertStatus, AlertType } from '../../../contract/vocabulary.ts';

/** The brand's switched-off alert types; none when it never set any. */
export async function selectDisabledTypes(db: Db, brandId: number): Promise<AlertType[]> {
  const row = await db.selectFrom('alert_brand_settings').select('disabled_types').where('brand_id', '=', brandId).executeTakeFirst();
  return row?.disabled_types ?? [];
}

export async function upsertDisabledTypes(db: Db, brandId: number, disabled: AlertType[]): Promise<void> {
  await db
    .insertInto('alert_brand_settings')
    .values({ brand_id: brandId, disabled_types: disabled })
    .onConflict((oc) => oc.column('brand_id').doUpdateSet((eb) => ({ disabled_types: eb.ref('excluded.disabled_types'), updated_at: sql<Date>`now()` })))
    .execute();
}

export async function brandExists(db: Db, brandId: number): Promise<boolean> {
  return (await db.selectFrom('brands').select('id').where('id', '=', brandId).executeTakeFirst()) !== undefined;
}

/** Inserts the alert unless its episode (brand, type, dedupe key) is recorded already; its id, or undefined. */
export async function insertAlertUnlessDuplicate(
  tx: Db,
  row: { brandId: number; type: AlertType; dedupeKey: string; subject: string; details: Record<string, string | number | boolean | null> },
): Promise<number | undefined> {
  const inserted = await tx
    .insertInto('alerts')
    .values({ brand_id: row.brandId, type: row.type, dedupe_key: row.dedupeKey, subject: row.subject, details: row.details })
    .onConflict((oc) => oc.columns(['brand_id', 'type', 'dedupe_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted?.id;
}

/** Counts a delivery attempt on a pending alert and returns it; undefined when it is not pending (any more). */
export async function startAttempt(db: Db, alertId: number) {
  return db
    .updateTable('alerts')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), updated_at: sql<Date>`now()` }))
    .where('id', '=', alertId)
    .where('status', '=', 'pending')
    .returning(['id', 'brand_id', 'type', 'subject', 'details', 'attempts', 'created_at'])
    .executeTakeFirst();
}

/** Records an attempt's outcome: delivered, failed for good, or pending again with the error. */
export async function finishAttempt(db: Db, alertId: number, outcome: { status: 'delivered' } | { status: 'failed' | 'pending'; error: string }): Promise<void> {
  const now = sql<Date>`now()`;
  const set =
    outcome.status === 'delivered'
      ? { status: 'delivered' as const, delivered_at: now, last_error: null, updated_at: now }
      : { status: outcome.status, last_error: outcome.error, updated_at: now };
  await db.updateTable('alerts').set(set).where('id', '=', alertId).execute();
}

/** Payments awaiting verification since before `minutes` ago, per brand and mode: how many, the oldest's id and time. */
export async function selectReviewWaiting(db: Db, minutes: number) {
  return db
    .selectFrom('transactions')
    .select((eb) => [
      'brand_id',
      'mode',
      eb.fn.countAll<string>().as('waiting'),
      sql<string>`(array_agg(id ORDER BY updated_at, id))[1]`.as('oldest_id'),
      // Named after its column on purpose: values are converted by output column name, so this comes back as a Date.
      eb.fn.min('updated_at').as('updated_at'),
    ])
    .where('status', '=', 'awaiting_verification')
    .where('updated_at', '<', sql<Date>`now() - make_interval(mins => ${minutes})`)
    .groupBy(['brand_id', 'mode'])
    .execute();
}

export interface AlertRowFilter {
  brandId?: number;
  /** Only these brands' alerts; absent or null: every brand. */
  brandIds?: number[] | null;
  type?: AlertType;
  status?: AlertStatus;
}

/** One page of the filtered alerts, newest first, and how many match. */
export async function selectAlertPage(db: Db, f: AlertRowFilter, page: { limit: number; offset: number }) {
  let q = db.selectFrom('alerts');
  if (f.brandId !== undefined) q = q.where('brand_id', '=', f.brandId);
  if (f.brandIds) q = q.where('brand_id', 'in', scopeParam(f.brandIds));
  if (f.type !== undefined) q = q.where('type', '=', f.type);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  const count = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select(['id', 'brand_id', 'type', 'subject', 'details', 'status', 'attempts', 'last_error', 'delivered_at', 'created_at'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { total: Number(count.n), rows };
}
