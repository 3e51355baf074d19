import { sql } from 'kysely';
import type { Db } from '../db.ts';

/** The payment with its brand, latest transaction (`t`, if any), that transaction's gateway and the submission counts. */
function checkoutQuery(db: Db, paymentUuid: string) {
  return db
    .selectFrom('payment_intents as i')
    .innerJoin('brands as b', 'b.id', 'i.brand_id')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('transactions as tt')
          .selectAll('tt')
          .whereRef('tt.intent_id', '=', 'i.id')
          .orderBy('tt.created_at', 'desc')
          .orderBy('tt.id', 'desc')
          .limit(1)
          .as('t'),
      (join) => join.onTrue(),
    )
    .leftJoin('gateways as g', 'g.id', 't.gateway_id')
    .leftJoin('checkout_submission_counts as c', 'c.intent_id', 'i.id')
    .select([
      'i.id as intent_id', 'i.brand_id', 'i.created_at as intent_created_at', 'i.uuid as payment_id', 'i.amount', 'i.currency', 'i.reference', 'i.status as intent_status', 'i.mode', 'i.expires_at',
      'i.success_url', 'i.cancel_url', 'b.name as brand_name', 'b.timezone as brand_timezone', 'b.status as brand_status', 'c.replacements',
      'c.taken_answers', 't.trx_id', 'g.code as gateway_code', 'g.name as gateway_name', 'g.type as gateway_type', 't.method', 't.status',
      't.amount as t_amount', 't.currency as t_currency', 't.fee', 't.sms_amount', 't.gateway_trx_id', 't.failure_reason', 't.created_at', 't.completed_at',
    ])
    // Expiry is judged by the database clock, like the expiry job and the intent's own expires_at.
    .select(sql<boolean>`(i.expires_at <= now())`.as('past_expiry'))
    .where('i.uuid', '=', paymentUuid);
}

export type CheckoutRow = Awaited<ReturnType<ReturnType<typeof checkoutQuery>['executeTakeFirstOrThrow']>>;

/** `paymentUuid` in lower case, as stored. */
export async function selectCheckout(db: Db, paymentUuid: string): Promise<CheckoutRow | undefined> {
  return checkoutQuery(db, paymentUuid).executeTakeFirst();
}

/**
 * Locks the payment intent (`FOR UPDATE` of the intent only) and reads its
 * brand's status and the submission counts. `paymentUuid` in lower case.
 */
export async function lockIntentWithCounts(tx: Db, paymentUuid: string) {
  return tx
    .selectFrom('payment_intents as i')
    .innerJoin('brands as b', 'b.id', 'i.brand_id')
    .leftJoin('checkout_submission_counts as c', 'c.intent_id', 'i.id')
    .select(['i.id as intent_id', 'i.brand_id', 'b.status as brand_status', 'c.replacements', 'c.taken_answers'])
    .where('i.uuid', '=', paymentUuid)
    .forUpdate('i')
    .executeTakeFirst();
}

/** Adds one to the payment's taken-id answers, atomically; the new count. */
export async function incrementTakenAnswers(db: Db, intentId: number): Promise<number> {
  const row = await db
    .insertInto('checkout_submission_counts')
    .values({ intent_id: intentId, taken_answers: 1 })
    .onConflict((oc) =>
      oc.column('intent_id').doUpdateSet((eb) => ({ taken_answers: eb('checkout_submission_counts.taken_answers', '+', 1), updated_at: sql<Date>`now()` })),
    )
    .returning('taken_answers')
    .executeTakeFirstOrThrow();
  return row.taken_answers;
}

/** Adds one to the payment's replacements, atomically; the new count. */
export async function incrementReplacements(db: Db, intentId: number): Promise<number> {
  const row = await db
    .insertInto('checkout_submission_counts')
    .values({ intent_id: intentId, replacements: 1 })
    .onConflict((oc) =>
      oc.column('intent_id').doUpdateSet((eb) => ({ replacements: eb('checkout_submission_counts.replacements', '+', 1), updated_at: sql<Date>`now()` })),
    )
    .returning('replacements')
    .executeTakeFirstOrThrow();
  return row.replacements;
}

/** The intent's status and whether it is past its expiry by the database clock. */
export async function selectIntentState(db: Db, intentId: number) {
  return db
    .selectFrom('payment_intents')
    .select('status')
    .select(sql<boolean>`(expires_at <= now())`.as('past_expiry'))
    .where('id', '=', intentId)
    .executeTakeFirstOrThrow();
}

export async function lockTransaction(tx: Db, transactionId: number): Promise<void> {
  await tx.selectFrom('transactions').select('id').where('id', '=', transactionId).forUpdate().execute();
}

/** The payment's latest transaction (id and claimed gateway id). `paymentUuid` in lower case. */
export async function selectLatestTransaction(db: Db, paymentUuid: string): Promise<{ id: number; gateway_trx_id: string | null } | undefined> {
  return db
    .selectFrom('transactions as t')
    .innerJoin('payment_intents as i', 'i.id', 't.intent_id')
    .select(['t.id', 't.gateway_trx_id'])
    .where('i.uuid', '=', paymentUuid)
    .orderBy('t.created_at', 'desc')
    .orderBy('t.id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
