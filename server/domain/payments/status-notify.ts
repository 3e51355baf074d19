import { sql, type Expression, type RawBuilder } from 'kysely';

/**
 * PostgreSQL NOTIFY channel announcing that a payment's status changed. The
 * payload is the intent's internal id (never the payment id, which is the
 * checkout's credential). Statements that change a transaction's or an
 * intent's status call `pg_notify` in their RETURNING, so the notification is
 * part of the same database transaction: it is delivered on commit only, to
 * every process listening (server/infra/database/listener.ts), and dropped on
 * rollback. Duplicates within one transaction are folded by PostgreSQL.
 * Receivers re-read the status, so a notification that changed nothing costs
 * one read and nothing else.
 */
export const PAYMENT_STATUS_CHANNEL = 'payment_status';

/**
 * `pg_notify('payment_status', <intent id>)` as a RETURNING column: one
 * notification per changed row and no round trip of its own. Raw SQL because
 * PostgreSQL's pg_notify returns `void`, a type the typed builder's function
 * helpers cannot name.
 */
export function notifyPaymentStatus(intentId: Expression<number>): RawBuilder<unknown> {
  return sql`pg_notify(${PAYMENT_STATUS_CHANNEL}, (${intentId})::text)`;
}
