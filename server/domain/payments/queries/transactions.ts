import { sql, type ExpressionBuilder, type Insertable, type Kysely } from 'kysely';
import { OPEN_TRANSACTION_STATUSES } from '../entities.ts';
import { prepared, type DB, type Db } from '../../db.ts';
import { notifyPaymentStatus } from '../status-notify.ts';
import type { PaymentRow } from './payments.ts';

/**
 * The transaction (`t`) with its intent's public id and invoice and its
 * gateway's code and type; add a where on `t`.
 */
export function transactionQuery(db: Db) {
  return transactionSelect(db);
}

/** transactionQuery on a given builder (a prepared statement compiles it once: sms/matching/candidates.ts). */
export function transactionSelect(k: Kysely<DB>) {
  return k
    .selectFrom('transactions as t')
    .innerJoin('payment_intents as i', 'i.id', 't.intent_id')
    .innerJoin('gateways as g', 'g.id', 't.gateway_id')
    .select([
      't.id', 't.trx_id', 't.brand_id', 't.mode', 't.intent_id', 'i.uuid as payment_id', 'i.invoice_id', 't.gateway_id', 'g.code as gateway_code', 'g.type as gateway_type',
      't.method', 't.gateway_trx_id', 't.amount', 't.currency', 't.fee', 't.sms_amount', 't.exchange_rate', 't.status', 't.failure_reason',
      't.completion_source', 't.created_at', 't.completed_at',
    ])
    // The wallet account it was paid into (a scalar subquery, not a join: callers lock these rows FOR UPDATE).
    .select(
      sql<{ id: number; number: string; device_id: number | null; sim_slot: number | null } | null>`(SELECT json_build_object('id', a.id, 'number', a.number, 'device_id', a.device_id, 'sim_slot', a.sim_slot)
         FROM wallet_accounts a WHERE a.id = t.wallet_account_id)`.as('wallet_account'),
    );
}

/** A row of transactionQuery. */
export type TransactionQueryRow = Awaited<ReturnType<ReturnType<typeof transactionQuery>['executeTakeFirstOrThrow']>>;

export async function transactionRow(db: Db, where: { id: number } | { trxId: string }): Promise<TransactionQueryRow | undefined> {
  const q = transactionQuery(db);
  return ('id' in where ? q.where('t.id', '=', where.id) : q.where('t.trx_id', '=', where.trxId)).executeTakeFirst();
}

/**
 * Locks the transaction's intent, then the transaction (always in that order),
 * and reads the transaction under both locks; undefined when there is none.
 * The intent is found and locked in one statement (a transaction's intent never
 * changes).
 */
export async function lockTransactionRow(tx: Db, transactionId: number): Promise<TransactionQueryRow | undefined> {
  const intent = await tx
    .selectFrom('payment_intents')
    .select('id')
    .where('id', '=', (eb) => eb.selectFrom('transactions').select('intent_id').where('id', '=', transactionId))
    .forUpdate()
    .executeTakeFirst();
  if (!intent) return undefined;
  return transactionQuery(tx).where('t.id', '=', transactionId).forUpdate('t').executeTakeFirst();
}

/** Whether the intent has a transaction that is open or completed. */
export async function hasLiveTransaction(tx: Db, intentId: number): Promise<boolean> {
  const live = await tx
    .selectFrom('transactions')
    .select('id')
    .where('intent_id', '=', intentId)
    .where('status', 'in', [...OPEN_TRANSACTION_STATUSES, 'completed'])
    .limit(1)
    .executeTakeFirst();
  return live !== undefined;
}

/** Inserts a transaction (its mode comes from its intent, by trigger); the checkout's streams are told. */
export async function insertTransaction(tx: Db, values: Omit<Insertable<DB['transactions']>, 'mode'>): Promise<number> {
  const row = await tx
    .insertInto('transactions')
    .values(values as Insertable<DB['transactions']>)
    .returning('id')
    .returning((eb) => notifyPaymentStatus(eb.ref('intent_id')).as('status_notified'))
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A transaction awaiting verification claims another gateway trx id (and sender); false when it was not awaiting verification. */
export async function updateClaim(tx: Db, transactionId: number, claim: { gatewayTrxId: string; senderEncrypted: string | null }): Promise<boolean> {
  const updated = await tx
    .updateTable('transactions')
    .set({ gateway_trx_id: claim.gatewayTrxId, sender_number_encrypted: claim.senderEncrypted, updated_at: sql<Date>`now()` })
    .where('id', '=', transactionId)
    .where('status', '=', 'awaiting_verification')
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** An open transaction's claimed gateway trx id replaced; false when it was no longer open. */
export async function setOpenClaim(tx: Db, transactionId: number, gatewayTrxId: string): Promise<boolean> {
  const updated = await tx
    .updateTable('transactions')
    .set({ gateway_trx_id: gatewayTrxId, updated_at: sql<Date>`now()` })
    .where('id', '=', transactionId)
    .where('status', 'in', OPEN_TRANSACTION_STATUSES)
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** A failed transaction's claimed gateway trx id released (set to null), so its real owner can still use it. */
export async function releaseClaimOfFailed(tx: Db, transactionId: number): Promise<void> {
  await tx.updateTable('transactions').set({ gateway_trx_id: null, updated_at: sql<Date>`now()` }).where('id', '=', transactionId).where('status', '=', 'failed').execute();
}

/** Fails an open transaction; the checkout's streams are told. */
export async function markTransactionFailed(tx: Db, transactionId: number, reason: string): Promise<void> {
  await tx
    .updateTable('transactions')
    .set({ status: 'failed', failure_reason: reason, updated_at: sql<Date>`now()` })
    .where('id', '=', transactionId)
    .where('status', 'in', OPEN_TRANSACTION_STATUSES)
    .returning((eb) => notifyPaymentStatus(eb.ref('intent_id')).as('status_notified'))
    .execute();
}

/** The intent columns of paymentQuery, as the completion's intent UPDATE returns them. */
export type IntentEventRow = Pick<
  PaymentRow,
  'intent_id' | 'payment_id' | 'brand_id' | 'intent_amount' | 'intent_currency' | 'reference' | 'metadata' | 'intent_status' | 'expires_at' | 'intent_created_at' | 'customer_id'
>;

/** What the intent's UPDATE of a completion returns: the intent columns a `payment.completed` event shows (IntentEventRow). */
const INTENT_EVENT_COLUMNS = [
  'payment_intents.id as intent_id', 'payment_intents.uuid as payment_id', 'payment_intents.brand_id', 'payment_intents.amount as intent_amount',
  'payment_intents.currency as intent_currency', 'payment_intents.reference', 'payment_intents.metadata', 'payment_intents.status as intent_status',
  'payment_intents.expires_at', 'payment_intents.created_at', 'payment_intents.customer_id',
] as const;

/** ...and the id of the intent's latest transaction: the event shows that one. */
const latestTransactionId = (eb: ExpressionBuilder<DB, 'payment_intents'>) =>
  eb
    .selectFrom('transactions as tt')
    .select('tt.id')
    .whereRef('tt.intent_id', '=', 'payment_intents.id')
    .orderBy('tt.created_at', 'desc')
    .orderBy('tt.id', 'desc')
    .limit(1)
    .as('latest_transaction_id');

/**
 * The completion statement: the transactions and intents by two id arrays,
 * each completion's claimed gateway trx id from a JSON object keyed by
 * transaction id (kept when the transaction already has one). Each completed
 * transaction comes back with its intent's columns the `payment.completed`
 * event shows, when the intent's UPDATE changed it, and the id of the intent's
 * latest transaction. Only open transactions and pending intents change.
 */
const completeTogether = prepared((q, $: { ids: number[]; intentIds: number[]; source: string; claimed: string }) =>
  q
    .with('done', (k) =>
      k
        .updateTable('transactions')
        .set({
          status: 'completed',
          completed_at: sql<Date>`now()`,
          completion_source: $.source,
          gateway_trx_id: sql<string | null>`COALESCE(gateway_trx_id, ${$.claimed}::jsonb ->> id::text)`,
          updated_at: sql<Date>`now()`,
        })
        .where('id', '=', (eb) => eb.fn.any(eb.val($.ids)))
        .where('status', 'in', OPEN_TRANSACTION_STATUSES)
        .returning(['id as done_id', 'intent_id as done_intent_id', 'completed_at', 'completion_source', 'gateway_trx_id'])
        // Announced on commit to whoever follows each payment (status-notify.ts).
        .returning((eb) => notifyPaymentStatus(eb.ref('intent_id')).as('status_notified')),
    )
    .with('intent', (k) =>
      k
        // Not aliased: the driver converts the columns of an UPDATE's table only when
        // it is named as such, and returns created_at under its own name for that.
        .updateTable('payment_intents')
        .set({ status: 'completed', completed_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
        .where('payment_intents.id', '=', (eb) => eb.fn.any(eb.val($.intentIds)))
        .where('payment_intents.status', '=', 'pending')
        .returning(INTENT_EVENT_COLUMNS)
        .returning(latestTransactionId),
    )
    .selectFrom('done')
    .leftJoin('intent', 'intent.intent_id', 'done.done_intent_id')
    .selectAll(['done', 'intent']),
);

/** Completes the given open transactions and their pending intents in one statement; `claimed` maps transaction id to its claimed gateway trx id. */
export async function completeTransactionRows(
  tx: Db,
  items: { ids: number[]; intentIds: number[]; source: string; claimed: Record<string, string | null> },
) {
  return completeTogether.execute(tx, { ids: items.ids, intentIds: items.intentIds, source: items.source, claimed: JSON.stringify(items.claimed) });
}
