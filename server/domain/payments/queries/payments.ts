import type { Kysely } from 'kysely';
import type { Mode } from '../../../../contract/vocabulary.ts';
import { prepared, type DB, type Db } from '../../db.ts';

/**
 * The intent (`intent`) with its latest transaction (`t`, if any) and that
 * transaction's gateway; add a where on `intent`. The table aliases are part of
 * the result's types: the driver converts a column named after a column of a
 * table in the query, or `<alias>_<column>` (`intent_created_at`,
 * `customer_brand_id`), so every timestamp below comes back as a Date. An alias
 * must not be a property name of those entities either (`gateway` would be read
 * as the transaction's gateway id). `transaction_id` names no column of these
 * tables and comes back as the driver's string: read it with Number().
 */
export function paymentQuery(db: Db) {
  return paymentSelect(db);
}

/** paymentQuery on a given builder (the prepared view below compiles it once). */
function paymentSelect(k: Kysely<DB>) {
  return k
    .selectFrom('payment_intents as intent')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('transactions as tt')
          .selectAll('tt')
          .whereRef('tt.intent_id', '=', 'intent.id')
          .orderBy('tt.created_at', 'desc')
          .orderBy('tt.id', 'desc')
          .limit(1)
          .as('t'),
      (join) => join.onTrue(),
    )
    .leftJoin('gateways as g', 'g.id', 't.gateway_id')
    .select([
      'intent.id as intent_id', 'intent.uuid as payment_id', 'intent.brand_id', 'intent.amount as intent_amount', 'intent.currency as intent_currency',
      'intent.reference', 'intent.metadata', 'intent.status as intent_status', 'intent.expires_at', 'intent.created_at as intent_created_at',
      'intent.customer_id', 't.id as transaction_id', 't.trx_id', 't.gateway_trx_id', 't.amount', 't.currency', 't.fee', 't.exchange_rate', 't.status',
      'g.code as gateway_code', 't.method', 't.failure_reason', 't.created_at', 't.completed_at',
    ]);
}

/** A row of paymentQuery. */
export type PaymentRow = Awaited<ReturnType<ReturnType<typeof paymentQuery>['executeTakeFirstOrThrow']>>;

/** The payment of an intent, as paymentQuery reads it. */
export async function paymentRowOfIntent(db: Db, intentId: number): Promise<PaymentRow> {
  return paymentQuery(db).where('intent.id', '=', intentId).executeTakeFirstOrThrow();
}

/**
 * The merchant's payment read with its customer's encrypted name and e-mail
 * joined in (one round trip, not a second query for the customer), compiled
 * once (db.ts `prepared`): on this path, building the query cost more CPU than
 * its round trip (BENCHMARKS.md).
 */
const paymentView = prepared((k, $: { uuid: string; brandId: number; mode: Mode }) =>
  paymentSelect(k)
    .leftJoin('customers as customer', 'customer.id', 'intent.customer_id')
    .select(['customer.uuid as customer_uuid', 'customer.brand_id as customer_brand_id', 'customer.name_encrypted as customer_name_encrypted',
      'customer.email_encrypted as customer_email_encrypted'])
    .where('intent.uuid', '=', $.uuid)
    .where('intent.brand_id', '=', $.brandId)
    .where('intent.mode', '=', $.mode),
);

/** A brand's payment in one mode by its public id (lower case), with its customer's encrypted fields. */
export async function paymentOfBrand(db: Db, where: { uuid: string; brandId: number; mode: Mode }) {
  return paymentView.executeTakeFirst(db, where);
}
