import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Mode } from '../../../../contract/vocabulary.ts';
import { QUOTABLE_COLUMNS } from '../../gateways/service.ts';
import { OPEN_TRANSACTION_STATUSES } from '../entities.ts';
import { prepared, type DB, type Db } from '../../db.ts';
import { notifyPaymentStatus } from '../status-notify.ts';

/** The default expiry setting's stored value (settings has no entity in this area). */
const expirySetting = sql<unknown>`(SELECT value FROM settings WHERE key = 'intent_expiry_minutes')`;

/**
 * What every intent creation reads, in one statement compiled once (db.ts
 * `prepared`): the enabled gateways in display order, each row carrying the
 * stored expiry setting; one row of nulls but the setting when no gateway is
 * enabled (the setting comes from a one-row subquery).
 */
const intentConfigQuery = prepared((k) =>
  k
    .selectFrom(sql<{ value: unknown }>`(SELECT ${expirySetting} AS value)`.as('s'))
    .leftJoinLateral((eb) => eb.selectFrom('gateways').select(['id', 'sort_order', ...QUOTABLE_COLUMNS]).where('enabled', '=', true).as('g'), (join) => join.onTrue())
    .select('s.value as expiry_setting')
    .select(['g.id', ...QUOTABLE_COLUMNS.map((c) => `g.${c}` as const)])
    .orderBy('g.sort_order')
    .orderBy('g.id'),
);

export async function intentConfigRows(db: Db) {
  return intentConfigQuery.execute(db, {});
}

export interface IntentValues {
  uuid: string;
  brandId: number;
  mode: Mode;
  amount: string;
  currency: string;
  reference: string | null;
  customerId: number | null;
  metadata: Record<string, unknown>;
  successUrl: string | null;
  cancelUrl: string | null;
  callbackUrl: string | null;
}

/** The intent INSERT, one statement per kind of expiry, compiled once. */
const insertIntentWith = <E>(expiresAt: ($: E) => Date | RawBuilder<Date>) =>
  prepared((k, $: IntentValues & E) =>
    k
      .insertInto('payment_intents')
      .values({
        uuid: $.uuid,
        brand_id: $.brandId,
        mode: $.mode,
        amount: $.amount,
        currency: $.currency,
        reference: $.reference,
        customer_id: $.customerId,
        metadata: $.metadata,
        success_url: $.successUrl,
        cancel_url: $.cancelUrl,
        callback_url: $.callbackUrl,
        expires_at: expiresAt($),
      })
      .returning(['uuid', 'amount', 'metadata', 'created_at', 'expires_at']),
  );

const insertIntentExpiringAt = insertIntentWith(($: { expiresAt: Date }) => $.expiresAt);
// From the database's clock, so that expires_at - created_at is exactly the lifetime asked for.
const insertIntentExpiringIn = insertIntentWith(($: { seconds: number }) => sql<Date>`now() + make_interval(secs => ${$.seconds})`);

export type InsertedIntent = NonNullable<Awaited<ReturnType<typeof insertIntentExpiringIn.executeTakeFirst>>>;

/** Inserts an intent expiring at a time, or in seconds from the database's now(). */
export async function insertIntent(db: Db, values: IntentValues, expiry: { at: Date } | { seconds: number }): Promise<InsertedIntent> {
  const r = 'at' in expiry
    ? await insertIntentExpiringAt.executeTakeFirst(db, { ...values, expiresAt: expiry.at })
    : await insertIntentExpiringIn.executeTakeFirst(db, { ...values, seconds: expiry.seconds });
  if (!r) throw new Error('payment intent insert returned no row');
  return r;
}

export const INTENT_COLUMNS = ['id', 'uuid', 'brand_id', 'mode', 'amount', 'currency', 'status', 'expires_at', 'success_url', 'cancel_url'] as const;
export type IntentRow = Pick<Selectable<DB['payment_intents']>, (typeof INTENT_COLUMNS)[number]>;

/** An intent by internal id or public payment id (lower case); `forUpdate` locks the row. */
export async function intentRow(db: Db, ref: { intentId: number } | { uuid: string }, opts: { forUpdate?: boolean } = {}): Promise<IntentRow | undefined> {
  const q = db.selectFrom('payment_intents').select(INTENT_COLUMNS);
  return ('intentId' in ref ? q.where('id', '=', ref.intentId) : q.where('uuid', '=', ref.uuid))
    .$if(opts.forUpdate === true, (b) => b.forUpdate())
    .executeTakeFirst();
}

/** Up to `limit` pending intents past their expiry (oldest first), locked; rows another worker holds are skipped. */
export async function lockDueIntents(tx: Db, limit: number): Promise<number[]> {
  const rows = await tx
    .selectFrom('payment_intents')
    .select('id')
    .where('status', '=', 'pending')
    .where('expires_at', '<=', sql<Date>`now()`)
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map((r) => r.id);
}

/** Moves pending intents and their open transactions to `expired` (the checkout's streams are told). */
export async function markIntentsExpired(tx: Db, intentIds: number[]): Promise<void> {
  await tx
    .updateTable('payment_intents')
    .set({ status: 'expired', expired_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('id', 'in', intentIds)
    .where('status', '=', 'pending')
    .returning((eb) => notifyPaymentStatus(eb.ref('id')).as('status_notified'))
    .execute();
  await tx
    .updateTable('transactions')
    .set({ status: 'expired', updated_at: sql<Date>`now()` })
    .where('intent_id', 'in', intentIds)
    .where('status', 'in', OPEN_TRANSACTION_STATUSES)
    .execute();
}

export async function intentBrandAndMode(db: Db, intentId: number): Promise<{ brand_id: number; mode: Mode }> {
  return db.selectFrom('payment_intents').select(['brand_id', 'mode']).where('id', '=', intentId).executeTakeFirstOrThrow();
}

/** A brand's intent in one mode by public id (lower case), locked, with whether it is past its expiry by the database's clock. */
export async function lockIntentOfBrand(tx: Db, where: { uuid: string; brandId: number; mode: Mode }) {
  return tx
    .selectFrom('payment_intents')
    .select(['id', 'status'])
    .select(sql<boolean>`(expires_at <= now())`.as('past_expiry'))
    .where('uuid', '=', where.uuid)
    .where('brand_id', '=', where.brandId)
    .where('mode', '=', where.mode)
    .forUpdate()
    .executeTakeFirst();
}

/** The intent's transactions that are open or completed, locked, oldest first. */
export async function lockLiveTransactionsOfIntent(tx: Db, intentId: number) {
  return tx
    .selectFrom('transactions')
    .select(['id', 'status'])
    .where('intent_id', '=', intentId)
    .where('status', 'in', [...OPEN_TRANSACTION_STATUSES, 'completed'])
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Fails the given transactions that are still `pending`. */
export async function failPendingTransactions(tx: Db, ids: number[], reason: string): Promise<void> {
  await tx
    .updateTable('transactions')
    .set({ status: 'failed', failure_reason: reason, updated_at: sql<Date>`now()` })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .execute();
}

/** Cancels a pending intent (the checkout's streams are told). */
export async function markIntentCanceled(tx: Db, intentId: number): Promise<void> {
  await tx
    .updateTable('payment_intents')
    .set({ status: 'canceled', canceled_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('id', '=', intentId)
    .where('status', '=', 'pending')
    .returning((eb) => notifyPaymentStatus(eb.ref('id')).as('status_notified'))
    .execute();
}
