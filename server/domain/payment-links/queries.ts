import { sql, type Insertable } from 'kysely';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { DB, Db } from '../db.ts';

/**
 * The link (`l`) with its status inputs. A single-use link is used while a
 * payment it created is paid or can still be paid (pending and not expired); a
 * payment that expired unpaid frees it.
 */
function linkQuery(db: Db) {
  return db
    .selectFrom('payment_links as l')
    .select([
      'l.id', 'l.public_id', 'l.brand_id', 'l.mode', 'l.amount', 'l.min_amount', 'l.max_amount', 'l.currency', 'l.single_use', 'l.expires_at', 'l.reference',
      'l.description', 'l.success_url', 'l.cancel_url', 'l.active', 'l.payments_created', 'l.created_at',
    ])
    .select((eb) => [
      sql<boolean>`(l.expires_at IS NOT NULL AND l.expires_at <= now())`.as('past_expiry'),
      eb
        .and([
          eb.ref('l.single_use'),
          eb.exists(
            eb
              .selectFrom('payment_intents as pi')
              .select(sql`1`.as('one'))
              .whereRef('pi.payment_link_id', '=', 'l.id')
              .where((w) => w.or([w('pi.status', '=', 'completed'), w.and([w('pi.status', '=', 'pending'), w('pi.expires_at', '>', sql<Date>`now()`)])])),
          ),
        ])
        .as('used'),
    ]);
}

export type PaymentLinkRow = Awaited<ReturnType<ReturnType<typeof linkQuery>['executeTakeFirstOrThrow']>>;

function linkWithBrand(db: Db) {
  return linkQuery(db).innerJoin('brands as b', 'b.id', 'l.brand_id').select(['b.name as brand_name', 'b.status as brand_status']);
}

/** A link with its brand's name and status, as the public link page reads it. */
export type PaymentLinkWithBrandRow = Awaited<ReturnType<ReturnType<typeof linkWithBrand>['executeTakeFirstOrThrow']>>;

/** The time is given as ISO text: PostgreSQL reads it, sub-millisecond digits included. */
export async function insertLink(db: Db, row: Omit<Insertable<DB['payment_links']>, 'expires_at'> & { expires_at: string | null }): Promise<number> {
  const { expires_at, ...rest } = row;
  const created = await db
    .insertInto('payment_links')
    .values({ ...rest, expires_at: expires_at === null ? null : sql<Date>`${expires_at}::timestamptz` })
    .returning('id')
    .executeTakeFirstOrThrow();
  return created.id;
}

export async function selectLinkById(db: Db, id: number): Promise<PaymentLinkRow> {
  return linkQuery(db).where('l.id', '=', id).executeTakeFirstOrThrow();
}

export async function selectLink(db: Db, brandId: number, mode: Mode, publicId: string): Promise<PaymentLinkRow | undefined> {
  return linkQuery(db).where('l.public_id', '=', publicId).where('l.brand_id', '=', brandId).where('l.mode', '=', mode).executeTakeFirst();
}

/** One page of the brand's links of the mode, newest first, and how many there are. */
export async function selectLinkPage(db: Db, brandId: number, mode: Mode, page: { limit: number; offset: number }): Promise<{ rows: PaymentLinkRow[]; total: number }> {
  const ofMode = (q: ReturnType<typeof linkQuery>) => q.where('l.brand_id', '=', brandId).where('l.mode', '=', mode);
  const rows = await ofMode(linkQuery(db)).select(sql<string>`count(*) OVER ()`.as('total')).orderBy('l.id', 'desc').limit(page.limit).offset(page.offset).execute();
  let total = rows[0] ? Number(rows[0].total) : 0;
  // Past the last page the window count has no row to ride on.
  if (!rows[0] && page.offset > 0) {
    const c = await ofMode(linkQuery(db)).clearSelect().select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    total = Number(c.n);
  }
  return { rows, total };
}

/** Deactivates the brand's link of the mode; an inactive one is left as it is. */
export async function deactivateLink(db: Db, brandId: number, mode: Mode, publicId: string): Promise<void> {
  await db
    .updateTable('payment_links')
    .set({ active: false, updated_at: sql<Date>`now()` })
    .where('public_id', '=', publicId)
    .where('brand_id', '=', brandId)
    .where('mode', '=', mode)
    .where('active', '=', true)
    .execute();
}

/**
 * Locks the link row in a statement of its own: a statement that waited for the
 * lock still evaluates its subqueries on the snapshot it started with, and
 * would not see the intent the previous visitor just committed. False when
 * there is no such link.
 */
export async function lockLink(tx: Db, publicId: string): Promise<boolean> {
  return (await tx.selectFrom('payment_links').select('id').where('public_id', '=', publicId).forUpdate().executeTakeFirst()) !== undefined;
}

export async function selectLinkWithBrand(db: Db, publicId: string): Promise<PaymentLinkWithBrandRow | undefined> {
  return linkWithBrand(db).where('l.public_id', '=', publicId).executeTakeFirst();
}

/** Ties the intent a visit created to its link and counts it on the link. */
export async function recordLinkPayment(tx: Db, linkId: number, paymentUuid: string): Promise<void> {
  await tx.updateTable('payment_intents').set({ payment_link_id: linkId }).where('uuid', '=', paymentUuid).execute();
  await tx
    .updateTable('payment_links')
    .set((eb) => ({ payments_created: eb('payments_created', '+', 1), updated_at: sql<Date>`now()` }))
    .where('id', '=', linkId)
    .execute();
}
