import { sql } from 'kysely';
import type { Db } from '../db.ts';

/**
 * The rewrite of personal data stored before it was bound to row and brand
 * (reencrypt.ts, legacy-tables.ts): each table's next batch of old rows
 * (`pii_v = 1`), locked in id order, and the one UPDATE that writes a row's new
 * values.
 */

export async function oldCustomers(tx: Db, n: number) {
  return tx
    .selectFrom('customers')
    .select(['id', 'uuid', 'brand_id', 'name_encrypted', 'email_encrypted', 'phone_encrypted', 'email_hash', 'phone_hash'])
    .where('pii_v', '=', 1)
    .orderBy('id')
    .limit(n)
    .forUpdate()
    .execute();
}

export async function oldSmsRecords(tx: Db, n: number) {
  return tx
    .selectFrom('sms_records')
    .select(['id', 'brand_id', 'device_id', 'device_message_id', 'sender', 'body_encrypted', 'parsed_sender_number', 'content_hash'])
    .where('pii_v', '=', 1)
    .orderBy('id')
    .limit(n)
    .forUpdate()
    .execute();
}

export async function oldNotifications(tx: Db, n: number) {
  return tx
    .selectFrom('notifications')
    .innerJoin('devices as d', 'd.id', 'notifications.device_id')
    .select(['notifications.id', 'd.brand_id', 'notifications.title', 'notifications.body'])
    .where('notifications.pii_v', '=', 1)
    .orderBy('notifications.id')
    .limit(n)
    .forUpdate('notifications')
    .execute();
}

export async function oldOutboundSms(tx: Db, n: number) {
  return tx
    .selectFrom('outbound_sms')
    .select(['id', 'brand_id', 'phone_encrypted', 'message_encrypted'])
    .where('pii_v', '=', 1)
    .orderBy('id')
    .limit(n)
    .forUpdate()
    .execute();
}

export async function oldTransactions(tx: Db, n: number) {
  return tx
    .selectFrom('transactions')
    .select(['id', 'brand_id', 'trx_id', 'sender_number_encrypted'])
    .where('pii_v', '=', 1)
    .orderBy('id')
    .limit(n)
    .forUpdate()
    .execute();
}

/** Writes a legacy row's new values and marks it rewritten, if it still is old. */
export async function writeRewrittenRow(tx: Db, table: string, id: number, values: Record<string, string | null>): Promise<void> {
  const columns = Object.keys(values);
  // Raw SQL: one generic UPDATE for several areas' tables, its table and columns named by the legacy-table spec.
  await sql`UPDATE ${sql.table(table)} SET ${sql.join(columns.map((c) => sql`${sql.ref(c)} = ${values[c]}`))}, pii_v = 2 WHERE id = ${id} AND pii_v = 1`.execute(tx);
}
