import { sql } from 'kysely';
import type { Db } from '../../db.ts';
import { scopeParam } from '../../brands/scope.ts';

/** What a transaction's timeline reads (payments/timeline.ts). */

/** The transaction, within `brandIds` when given. */
export async function timelineTransaction(db: Db, transactionId: number, brandIds: readonly number[] | null) {
  return db
    .selectFrom('transactions')
    .select(['id', 'brand_id', 'trx_id', 'amount', 'currency', 'status', 'failure_reason', 'completion_source', 'created_at', 'completed_at', 'updated_at'])
    .where('id', '=', transactionId)
    .$if(brandIds !== null, (q) => q.where('brand_id', 'in', scopeParam(brandIds!)))
    .executeTakeFirst();
}

/** Its SMS records (matched or candidate), webhook deliveries of its events, refunds and audit rows, read together. */
export async function timelineParts(db: Db, transactionId: number, brandId: number) {
  return Promise.all([
    db
      .selectFrom('sms_records')
      .select(['id', 'match_status', 'parsed_amount', 'parsed_trx_id', 'server_received_at', 'transaction_id', 'resolution', 'resolution_note'])
      // Raw SQL: array membership (`= ANY(candidate_ids)`) has no builder form in the typed schema.
      .where((eb) => eb.or([eb('transaction_id', '=', transactionId), sql<boolean>`${transactionId}::bigint = ANY(candidate_ids)`]))
      .where('brand_id', '=', brandId)
      .execute(),
    db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select(['d.id', 'd.status', 'd.url', 'd.attempts', 'd.created_at', 'd.delivered_at', 'd.dead_lettered_at', 'e.event'])
      .where('e.transaction_id', '=', transactionId)
      .where('e.brand_id', '=', brandId)
      .execute(),
    db.selectFrom('refunds').select(['id', 'amount', 'currency', 'status', 'created_at', 'processed_at']).where('transaction_id', '=', transactionId).execute(),
    db
      .selectFrom('audit_log')
      .select(['id', 'actor', 'action', 'created_at', 'after'])
      .where('target_type', '=', 'transaction')
      .where('target_id', '=', String(transactionId))
      .execute(),
  ]);
}
