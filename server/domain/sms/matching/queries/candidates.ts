import { sql, type Kysely } from 'kysely';
import type { Mode } from '../../../../../contract/vocabulary.ts';
import type { TransactionStatus } from '../../../payments/entities.ts';
import { transactionSelect } from '../../../payments/queries/transactions.ts';
import { prepared, rawStatement, type DB, type Db } from '../../../db.ts';
import { OPEN_STATUSES } from '../matcher.ts';

/** What an SMS's money-in reading looks for (candidatesOfReadings). */
export interface CandidateQuery {
  brandId: number;
  mode: Mode;
  gatewayIds: readonly number[];
  trxId: string;
  amount: string;
  smsTime: Date;
  windowMinutes: number;
}

/**
 * Every gateway with official SMS senders, in display order. Disabled ones
 * too: a gateway switched off today still has transactions waiting for the
 * SMS that proves them.
 */
export async function gatewaySmsRows(db: Db) {
  return db
    .selectFrom('gateways')
    .select(['id', 'code', 'sms_senders', 'sms_templates', 'review_above'])
    .where(sql<number>`cardinality(sms_senders)`, '>', 0)
    .orderBy('sort_order')
    .orderBy('id')
    .execute();
}

/**
 * The candidates of every reading, as a query to select from: the readings are
 * one JSON parameter, so the statement is the same for any number of them. The
 * conditions (docs/matching.md): the brand's open transactions of the SMS's
 * mode on the gateways, with the amount, whose payment was created within the
 * window before the SMS time; plus every transaction on those gateways
 * claiming the parsed trx id (any status, any brand: the matcher needs them to
 * see duplicates and conflicts).
 */
function readingsCandidates(k: Kysely<DB>, readings: string) {
  return k
    // Raw: json_to_recordset's column definition list (the batch's readings as a table) has no builder form.
    .with('q', () =>
      sql<{ n: number; gateway_ids: number[]; brand_id: number; mode: Mode; trx_id: string; amount: string; sms_time: Date; window_minutes: number }>`(SELECT * FROM json_to_recordset(${readings}::json)
        AS q(n integer, gateway_ids bigint[], brand_id bigint, mode text, trx_id text, amount numeric, sms_time timestamptz, window_minutes integer))`,
    )
    .selectFrom('q')
    // LATERAL: each reading's look-up is planned as loadCandidates' own, on the indexes of either condition (BitmapOr),
    // the reading's values as parameters. The intent's creation is a scalar subquery and the window is checked
    // outside, behind OFFSET 0: as a join, PostgreSQL hashed every payment intent for each batch (EXPLAIN, BENCHMARKS.md).
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('transactions as t')
          .select(['t.id', 't.brand_id', 't.intent_id', 't.gateway_id', 't.sms_amount', 't.gateway_trx_id', 't.status', 't.sender_number_encrypted', 't.trx_id'])
          .select((s2) => s2.selectFrom('payment_intents as i').select('i.created_at').whereRef('i.id', '=', 't.intent_id').as('created_at'))
          .select(sql<Mode>`t.mode`.as('mode'))
          // The wallet account it was paid into (fixed when the transaction started), as the matcher compares it.
          .select(
            sql<{ number: string; device_id: number | null; sim_slot: number | null } | null>`(SELECT json_build_object('number', a.number, 'device_id', a.device_id, 'sim_slot', a.sim_slot)
               FROM wallet_accounts a WHERE a.id = t.wallet_account_id)`.as('account'),
          )
          .select(sql<boolean>`(t.gateway_trx_id IS NOT NULL AND upper(t.gateway_trx_id) = upper(q.trx_id))`.as('claims'))
          .where(sql<boolean>`t.gateway_id = ANY(q.gateway_ids)`)
          .where((w) =>
            w.or([
              w.and([w('t.brand_id', '=', w.ref('q.brand_id')), w('t.status', 'in', [...OPEN_STATUSES] as TransactionStatus[]), w('t.sms_amount', '=', w.ref('q.amount'))]),
              w.and([w('t.gateway_trx_id', 'is not', null), w(sql`upper(t.gateway_trx_id)`, '=', sql`upper(q.trx_id)`)]),
            ]),
          )
          .offset(0)
          .as('c'),
      (j) => j.onTrue(),
    )
    // loadCandidates' condition: a claimer of the id, or the brand's open payment of the SMS's mode with its amount in the window.
    .where((w) =>
      w.or([
        w('c.claims', '=', true),
        w.and([
          w('c.brand_id', '=', w.ref('q.brand_id')),
          w(sql.ref('c.mode'), '=', w.ref('q.mode')),
          w('c.status', 'in', [...OPEN_STATUSES] as TransactionStatus[]),
          w('c.sms_amount', '=', w.ref('q.amount')),
          w('c.created_at', '>=', sql<Date>`q.sms_time - make_interval(mins => q.window_minutes)`),
          w('c.created_at', '<=', sql<Date>`q.sms_time`),
        ]),
      ]),
    );
}

/** The candidates of every reading, by reading (`n`), compiled once (db.ts `prepared`). */
const candidatesOfReadings = prepared((k, $: { readings: string }) =>
  readingsCandidates(k, $.readings)
    .select(['q.n', 'c.id', 'c.brand_id', 'c.intent_id', 'c.gateway_id', 'c.sms_amount', 'c.gateway_trx_id', 'c.created_at', 'c.status', 'c.sender_number_encrypted', 'c.trx_id', 'c.mode', 'c.claims', 'c.account'])
    .orderBy('q.n')
    .orderBy('c.id'),
);

/**
 * The candidates of each reading (not locked), in reading order then transaction
 * id, each with `n` (its reading's index) and whether it `claims` the reading's
 * trx id. Open ones with another amount are left out in the query: the matcher
 * never decides by them, and a busy brand can have thousands in the window.
 */
export async function candidatesOf(db: Db, readings: readonly CandidateQuery[]) {
  if (readings.length === 0) return [];
  const input = JSON.stringify(
    readings.map((q, n) => ({
      n,
      gateway_ids: [...q.gatewayIds],
      brand_id: q.brandId,
      mode: q.mode,
      trx_id: q.trxId,
      amount: q.amount,
      sms_time: q.smsTime.toISOString(),
      window_minutes: q.windowMinutes,
    })),
  );
  const rows = await candidatesOfReadings.execute(db, { readings: input });
  for (const r of rows) {
    // Read through a subquery: make sure it still came back as a Date, as the timing rule needs.
    if (!(r.created_at instanceof Date)) throw new Error('candidate created_at was not read as a timestamp');
  }
  return rows as Array<(typeof rows)[number] & { created_at: Date }>;
}

/**
 * The intents' locks of the open candidates, in id order. The intent's creation
 * (the timing rule's reference) comes with its lock: it never changes.
 */
const lockIntents = prepared((k, $: { ids: number[] }) =>
  k
    .selectFrom('payment_intents')
    .select(['payment_intents.id as intent_id', 'payment_intents.created_at'])
    .where('payment_intents.id', '=', (eb) => eb.fn.any(eb.val($.ids)))
    .orderBy('payment_intents.id')
    .forUpdate(),
);

/**
 * The transactions' locks of the open candidates, in id order: each whole
 * transaction, read under its lock, with its customer's phone (not locked): the
 * number a claimer without a declared one is compared with.
 */
function transactionLocks(k: Kysely<DB>) {
  return transactionSelect(k)
    .select('t.sender_number_encrypted as payer_number_encrypted')
    .leftJoin('customers as cu', 'cu.id', 'i.customer_id')
    .select(['cu.brand_id as customer_brand_id', 'cu.uuid as customer_uuid', 'cu.phone_encrypted as customer_phone_encrypted'])
    .orderBy('t.id')
    .forUpdate('t');
}
const lockTransactions = prepared((k, $: { ids: number[] }) => transactionLocks(k).where('t.id', '=', (eb) => eb.fn.any(eb.val($.ids))));

export type IntentLockRow = Awaited<ReturnType<typeof lockIntents.execute>>[number];
export type TransactionLockRow = Awaited<ReturnType<typeof lockTransactions.execute>>[number];

/** Locks the intents (ids sorted by the caller) and returns their creation times. */
export async function lockCandidateIntents(tx: Db, ids: number[]): Promise<IntentLockRow[]> {
  return lockIntents.execute(tx, { ids });
}

/** Locks the transactions in id order and reads them under their locks. */
export async function lockCandidateTransactions(tx: Db, ids: number[]): Promise<TransactionLockRow[]> {
  return lockTransactions.execute(tx, { ids });
}

/**
 * The advisory locks of gateway trx ids (gateway-trx-lock.ts), one per key, in
 * the given (sorted) order, in one statement. Raw SQL: the order is kept by
 * WITH ORDINALITY under the call, which the builder has no way to say.
 */
const lockTrxKeys = rawStatement(
  `SELECT pg_advisory_xact_lock(hashtextextended('gateway_trx_id:' || s.key, 0)) FROM (SELECT key FROM json_array_elements_text($1::json) WITH ORDINALITY AS u(key, n) ORDER BY n) s`,
);

export async function lockTrxIdKeys(tx: Db, sortedKeys: readonly string[]): Promise<void> {
  if (sortedKeys.length > 0) await lockTrxKeys(tx, [JSON.stringify(sortedKeys)]);
}

/** The ids among `trxIds` that an SMS of the brand and mode, other than `recordIds`, contradicted or a person dismissed (contradicted.ts). */
const contradictedStatement = prepared((k, $: { brandId: number; mode: Mode; recordIds: number[]; trxIds: string[] }) =>
  k
    .selectFrom('sms_records')
    .select('parsed_trx_id')
    .distinct()
    .where('brand_id', '=', $.brandId)
    .where('mode', '=', $.mode)
    .where('parsed_trx_id', '=', (eb) => eb.fn.any(eb.val($.trxIds)))
    .where((eb) => eb.not(eb('id', '=', eb.fn.any(eb.val($.recordIds)))))
    .where((eb) => eb.or([eb('match_status', '=', 'balance_mismatch'), eb('resolution', '=', 'dismissed')])),
);

export async function contradictedTrxIds(db: Db, q: { brandId: number; mode: Mode; recordIds: number[]; trxIds: string[] }): Promise<string[]> {
  return (await contradictedStatement.execute(db, q)).map((r) => r.parsed_trx_id!);
}

/** The customers' stored phones of the intents (by one id array), for those with one. */
const phonesOfIntents = prepared((k, $: { ids: number[] }) =>
  k
    .selectFrom('payment_intents as i')
    .innerJoin('customers as c', 'c.id', 'i.customer_id')
    .select(['i.id', 'c.brand_id', 'c.uuid', 'c.phone_encrypted'])
    .where('i.id', '=', (eb) => eb.fn.any(eb.val($.ids)))
    .where('c.phone_encrypted', 'is not', null),
);

export async function customerPhoneRowsOfIntents(db: Db, intentIds: number[]) {
  return phonesOfIntents.execute(db, { ids: intentIds });
}

/** The payment of a transaction as a submission's match compares it: its intent's id and creation, the declared payer number and the customer's phone (both encrypted). */
export async function claimantOf(db: Db, transactionId: number) {
  return db
    .selectFrom('payment_intents as i')
    .innerJoin('transactions as t', 't.intent_id', 'i.id')
    .leftJoin('customers as c', 'c.id', 'i.customer_id')
    .select(['i.id', 'i.created_at', 't.sender_number_encrypted as payer', 'c.phone_encrypted as customer_phone'])
    .where('t.id', '=', transactionId)
    .executeTakeFirstOrThrow();
}
