import { sql } from 'kysely';
import type { Db } from '../db.ts';

/** The session (`s`) with what its page shows of the payment. */
function sessionQuery(db: Db) {
  return db
    .selectFrom('sandbox_sessions as s')
    .innerJoin('transactions as t', 't.id', 's.transaction_id')
    .innerJoin('payment_intents as i', 'i.id', 't.intent_id')
    .innerJoin('brands as b', 'b.id', 't.brand_id')
    .innerJoin('gateways as g', 'g.id', 't.gateway_id')
    .select([
      's.id', 's.transaction_id', 's.trx_id', 'i.uuid as payment_id', 'b.name as brand_name', 'b.status as brand_status', 'g.name as gateway_name',
      's.amount', 's.currency', 's.status', 's.gateway_trx_id', 's.decline_reason', 's.expires_at', 's.decided_at', 't.status as transaction_status',
      's.callback_attempts', 's.callback_last_status', 's.callback_delivered_at',
    ])
    // By the database clock, like the conditional UPDATE that decides.
    .select(sql<boolean>`(s.status = 'open' AND s.expires_at > now())`.as('decidable'));
}

export type SessionRow = Awaited<ReturnType<ReturnType<typeof sessionQuery>['executeTakeFirstOrThrow']>>;

export async function selectSessionByTokenHash(db: Db, tokenHash: string): Promise<SessionRow | undefined> {
  return sessionQuery(db).where('s.token_hash', '=', tokenHash).executeTakeFirst();
}

export async function selectSessionById(db: Db, id: number): Promise<SessionRow | undefined> {
  return sessionQuery(db).where('s.id', '=', id).executeTakeFirst();
}

export async function insertSession(
  tx: Db,
  row: { tokenHash: string; transactionId: number; trxId: string; amount: string; currency: string; expiresAt: Date },
): Promise<void> {
  await tx
    .insertInto('sandbox_sessions')
    .values({ token_hash: row.tokenHash, transaction_id: row.transactionId, trx_id: row.trxId, amount: row.amount, currency: row.currency, expires_at: row.expiresAt })
    .execute();
}

/**
 * Decides the session if it is open, not past its expiry and its brand active:
 * one conditional UPDATE, so two racing decisions cannot both win. Its id, or
 * undefined when nothing was decided.
 */
export async function decideOpenSession(
  tx: Db,
  tokenHash: string,
  decision: { status: 'approved' | 'declined'; gatewayTrxId: string; declineReason: string | null },
): Promise<number | undefined> {
  const updated = await tx
    .updateTable('sandbox_sessions')
    .set({ status: decision.status, gateway_trx_id: decision.gatewayTrxId, decline_reason: decision.declineReason, decided_at: sql<Date>`now()` })
    .where('token_hash', '=', tokenHash)
    .where('status', '=', 'open')
    .where('expires_at', '>', sql<Date>`now()`)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('transactions as t')
          .innerJoin('brands as b', 'b.id', 't.brand_id')
          .select(sql`1`.as('one'))
          .whereRef('t.id', '=', 'sandbox_sessions.transaction_id')
          .where('b.status', '=', 'active'),
      ),
    )
    .returning('id')
    .executeTakeFirst();
  return updated?.id;
}

/** Records one callback attempt (the sandbox's own delivery log); the first delivery's time stays. */
export async function recordCallbackAttempt(db: Db, sessionId: number, status: number | null, delivered: boolean): Promise<void> {
  await db
    .updateTable('sandbox_sessions')
    .set((eb) => ({
      callback_attempts: eb('callback_attempts', '+', 1),
      callback_last_status: status,
      ...(delivered ? { callback_delivered_at: sql<Date>`COALESCE(callback_delivered_at, now())` } : {}),
    }))
    .where('id', '=', sessionId)
    .execute();
}

/** The type of the gateway a transaction went to; undefined for an unknown transaction. */
export async function selectTransactionGatewayType(db: Db, transactionId: number) {
  return db
    .selectFrom('transactions as t')
    .innerJoin('gateways as g', 'g.id', 't.gateway_id')
    .select('g.type')
    .where('t.id', '=', transactionId)
    .executeTakeFirst();
}
