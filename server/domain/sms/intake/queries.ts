import { sql, type Insertable, type Selectable } from 'kysely';
import { prepared, type DB, type Db } from '../../db.ts';

/** The SMS records as intake writes and reads them back. */

/** The columns intake writes, in the INSERT's column order. */
const RECORD_COLUMNS = [
  'brand_id', 'device_id', 'device_message_id', 'content_hash', 'sender', 'body_encrypted', 'received_at', 'sim_slot', 'receiving_number', 'phone_order', 'match_status', 'duplicate_of_id',
  'reason', 'reason_code', 'entry', 'entered_by', 'operator_name',
] as const;

/** A record as intake writes it (its mode comes from its device, by trigger). */
export type RecordValues = Required<Pick<Insertable<DB['sms_records']>, (typeof RECORD_COLUMNS)[number]>>;

/**
 * The batch INSERT. The rows come as one jsonb array typed by the table itself
 * (jsonb_populate_recordset over the sms_records row type), so the statement is
 * compiled once (db.ts `prepared`) for every batch size, and inserted in the
 * array's order. A row ON CONFLICT DO NOTHING refused returns nothing.
 */
const insertRecords = prepared((k, $: { rows: string }) =>
  k
    .insertInto('sms_records')
    .columns([...RECORD_COLUMNS])
    .expression((eb) =>
      eb
        // Raw: a set-returning function typed by the table's row type, which the builder has no call for.
        .selectFrom(sql<Selectable<DB['sms_records']> & { ordinality: number }>`jsonb_populate_recordset(NULL::sms_records, ${$.rows}::jsonb) WITH ORDINALITY`.as('v'))
        .select(RECORD_COLUMNS.map((c) => `v.${c}` as const))
        .orderBy('v.ordinality'),
    )
    .onConflict((oc) => oc.doNothing())
    .returning(['id', 'device_message_id', 'mode']),
);

/** Inserts the rows in their order, in one statement; returns those the unique indexes did not refuse. */
export async function insertRecordRows(db: Db, rows: readonly RecordValues[]) {
  if (rows.length === 0) return [];
  // A lone surrogate (a phone's message id may hold one) is stored as U+FFFD, as the driver encodes a text parameter:
  // JSON.stringify would write it as an escape that PostgreSQL's jsonb refuses.
  return insertRecords.execute(db, { rows: JSON.stringify(rows, (_, v: unknown) => (typeof v === 'string' ? v.toWellFormed() : v)) });
}

/** Inserts one record; null when the unique indexes refused it. */
export async function insertRecordRow(db: Db, row: RecordValues): Promise<number | null> {
  const inserted = await db.insertInto('sms_records').values(row).onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
  return inserted?.id ?? null;
}

const ownRecord = prepared((k, $: { deviceId: number; deviceMessageId: string }) =>
  k.selectFrom('sms_records').select('id').where('device_id', '=', $.deviceId).where('device_message_id', '=', $.deviceMessageId),
);

/** The device's record of a message id, if stored. */
export async function recordOfMessage(db: Db, deviceId: number, deviceMessageId: string): Promise<number | null> {
  return (await ownRecord.executeTakeFirst(db, { deviceId, deviceMessageId }))?.id ?? null;
}

/** The original record of a content hash in the brand and the device's mode. */
export async function originalOf(db: Db, q: { brandId: number; deviceId: number; contentHash: string }): Promise<number> {
  const row = await db
    .selectFrom('sms_records')
    .select('id')
    .where('brand_id', '=', q.brandId)
    .where('mode', '=', (eb) => eb.selectFrom('devices').select('devices.mode').where('devices.id', '=', q.deviceId))
    .where('content_hash', '=', q.contentHash)
    .where('duplicate_of_id', 'is', null)
    .executeTakeFirstOrThrow();
  return row.id;
}

const recordsAsStored = prepared((k, $: { ids: number[] }) =>
  k
    .selectFrom('sms_records as r')
    .leftJoin('transactions as t', 't.id', 'r.transaction_id')
    .select(['r.id', 'r.match_status', 'r.duplicate_of_id', 't.trx_id'])
    .where('r.id', '=', (eb) => eb.fn.any(eb.val($.ids))),
);

/** The records' status, original and completed transaction's service trx id, as stored now. */
export async function recordAnswers(db: Db, ids: number[]) {
  return recordsAsStored.execute(db, { ids });
}

/* Parts of long SMS (parts.ts). */

/** Serialises the work on one set of parts (its device and group), to the end of the transaction. */
export async function lockPartSet(tx: Db, deviceId: number, groupHash: string): Promise<void> {
  // Raw: an advisory lock, which the builder has no call for.
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`sms_parts:${deviceId}:${groupHash}`}, 0))`.execute(tx);
}

/** The device's part of a message id, if stored (waiting, or kept after its set was joined). */
export async function partOfMessage(db: Db, deviceId: number, deviceMessageId: string) {
  return db
    .selectFrom('sms_parts')
    .select(['id', 'joined_record_id'])
    .where('device_id', '=', deviceId)
    .where('device_message_id', '=', deviceMessageId)
    .executeTakeFirst();
}

export type PartValues = Required<
  Pick<
    Insertable<DB['sms_parts']>,
    'brand_id' | 'device_id' | 'device_message_id' | 'group_hash' | 'reference' | 'part_count' | 'part_index' | 'sender' | 'body_encrypted' | 'received_at' | 'sim_slot' | 'receiving_number'
  >
>;

/** Stores a part; nothing when its message id, or its place in its waiting set, is stored already. */
export async function insertPart(db: Db, row: PartValues): Promise<void> {
  await db.insertInto('sms_parts').values(row).onConflict((oc) => oc.doNothing()).execute();
}

/** The waiting parts of a set, in index order. */
export async function waitingParts(db: Db, q: { deviceId: number; groupHash: string; count: number }) {
  return db
    .selectFrom('sms_parts')
    .select(['id', 'device_message_id', 'reference', 'part_count', 'part_index', 'sender', 'body_encrypted', 'received_at', 'sim_slot', 'receiving_number', 'created_at'])
    .where('device_id', '=', q.deviceId)
    .where('group_hash', '=', q.groupHash)
    .where('part_count', '=', q.count)
    .where('joined_record_id', 'is', null)
    .orderBy('part_index')
    .execute();
}

/** Marks parts joined into a record, clearing their sender and text (kept as tombstones for retries). */
export async function markPartsJoined(db: Db, ids: number[], recordId: number): Promise<void> {
  await db.updateTable('sms_parts').set({ joined_record_id: recordId, sender: null, body_encrypted: null }).where('id', '=', (eb) => eb.fn.any(eb.val(ids))).execute();
}

export async function deleteParts(db: Db, ids: number[]): Promise<void> {
  await db.deleteFrom('sms_parts').where('id', '=', (eb) => eb.fn.any(eb.val(ids))).execute();
}

/** Sets with a waiting part stored before `before`, oldest first. */
export async function staleWaitingSets(db: Db, before: Date, limit: number) {
  return db
    .selectFrom('sms_parts')
    .select(['brand_id', 'device_id', 'group_hash', 'part_count'])
    .select((eb) => eb.fn.min('created_at').as('first_at'))
    .where('joined_record_id', 'is', null)
    .where('created_at', '<', before)
    .groupBy(['brand_id', 'device_id', 'group_hash', 'part_count'])
    .orderBy('first_at')
    .limit(limit)
    .execute();
}

/** Removes the tombstones of parts joined before `before`. */
export async function deleteJoinedPartsBefore(db: Db, before: Date): Promise<number> {
  const r = await db.deleteFrom('sms_parts').where('joined_record_id', 'is not', null).where('created_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
