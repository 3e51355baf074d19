import { sql } from 'kysely';
import { pipelined, prepared, type Db } from '../db.ts';
import type { BoundStatement } from '../../infra/database/convert-values.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { SmsRecordStatus } from './entities.ts';
import { smsContentHash } from './content-hash.ts';
import type { MatchSmsRecords, StoredSms } from './matching-seam.ts';
import { smsTimeSql } from './sms-time.ts';
import { SMS_RECORD_CONTEXT, smsRecordBinding } from './record-cipher.ts';

export interface ForwardedSms {
  deviceMessageId: string;
  sender: string;
  body: string;
  receivedAt: Date;
  simSlot: number | null;
  /** Set for an SMS an operator pasted by hand (recovery/paste.ts); absent for the phone's own. */
  pasted?: { enteredBy: string; operatorName: string | null };
}

export interface IntakeResult {
  deviceMessageId: string;
  id: number;
  matchStatus: SmsRecordStatus;
  trxId: string | null;
  duplicateOf: number | null;
}

export interface IntakeDeps {
  cipher: PiiCipher;
  /** Key of the content hash (see content-hash.ts). */
  hashKey: Buffer;
  match?: MatchSmsRecords;
  onMatchError?: (err: unknown) => void;
}

type Caller = { brandId: number; deviceId: number };

/** Sender and body as stored: cipher tokens bound to the brand and the record's natural key. */
interface Sealed {
  sender: string;
  body: string;
}

function recordRow(caller: Caller, sms: ForwardedSms, hash: string, encrypted: Sealed, duplicateOf: number | null, phoneOrder: number) {
  return {
    brand_id: caller.brandId,
    device_id: caller.deviceId,
    device_message_id: sms.deviceMessageId,
    content_hash: hash,
    sender: encrypted.sender,
    body_encrypted: encrypted.body,
    received_at: sms.receivedAt,
    sim_slot: sms.simSlot,
    phone_order: phoneOrder,
    match_status: duplicateOf === null ? ('pending' as const) : ('duplicate' as const),
    duplicate_of_id: duplicateOf,
    reason: duplicateOf === null ? null : `same sender and text as SMS record ${duplicateOf}, forwarded before`,
    reason_code: duplicateOf === null ? null : 'duplicate_content',
    entry: sms.pasted ? ('pasted' as const) : ('forwarded' as const),
    entered_by: sms.pasted?.enteredBy ?? null,
    operator_name: sms.pasted?.operatorName ?? null,
  };
}

async function insertRecord(tx: Db, caller: Caller, sms: ForwardedSms, hash: string, encrypted: Sealed, duplicateOf: number, phoneOrder: number): Promise<number | null> {
  const row = await tx
    .insertInto('sms_records')
    .values(recordRow(caller, sms, hash, encrypted, duplicateOf, phoneOrder))
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? null;
}

/** findOwn's statement, compiled once (db.ts `prepared`). */
const ownRecord = prepared((k, $: { deviceId: number; deviceMessageId: string }) =>
  k.selectFrom('sms_records').select('id').where('device_id', '=', $.deviceId).where('device_message_id', '=', $.deviceMessageId),
);

async function findOwn(tx: Db, caller: Caller, deviceMessageId: string): Promise<number | null> {
  const row = await ownRecord.executeTakeFirst(tx, { deviceId: caller.deviceId, deviceMessageId });
  return row?.id ?? null;
}

type RecordRow = ReturnType<typeof recordRow>;
/** recordRow's columns, in its order (the INSERT's column list). */
const RECORD_COLUMNS = [
  'brand_id', 'device_id', 'device_message_id', 'content_hash', 'sender', 'body_encrypted', 'received_at', 'sim_slot', 'phone_order', 'match_status', 'duplicate_of_id',
  'reason', 'reason_code', 'entry', 'entered_by', 'operator_name',
] as const satisfies ReadonlyArray<keyof RecordRow>;

/**
 * The batch INSERT, with the proof of the filter rules the batch was screened
 * with. Stores nothing unless the brand's rules version (sms_filter_rules
 * version plus the sender epoch, as filter-rules/service.ts toRules counts it)
 * is `rulesVersion` in this statement's own snapshot, or `rulesVersion` is null
 * (a batch screened on rules read after it arrived, or not screened at all).
 * One row always comes back with `current`, the proof, then each inserted
 * record: no record and `current` false means the rules changed, no record and
 * `current` true that ON CONFLICT DO NOTHING refused every row.
 *
 * A flag rather than an error: the statement stays one builder statement whose
 * answer is converted like any other, a failed proof logs no ERROR on the
 * server, and a clock sample sent ahead of it in the same round trip is not
 * mistaken for its failure. The proof has to gate the INSERT itself (a read of
 * the version in another statement has another snapshot), so the rows come
 * from a SELECT, not a VALUES list: a VALUES list outside INSERT ... VALUES
 * types its parameters as text. They come as one jsonb array typed by the table
 * itself (jsonb_populate_recordset over the sms_records row type), so the
 * statement is compiled once (db.ts `prepared`) for every batch size, and
 * inserted in the array's order (content-hash order, see ingestSmsBatch).
 */
const insertRecords = prepared((k, $: { rows: string; brandId: number; rulesVersion: number | null }) =>
  k
    // Raw: the builder cannot type a parameter that may be null in `IS NULL`; the version is the sum of two tables' counters.
    .with('proof', (w) => w.selectNoFrom(sql<boolean>`${$.rulesVersion}::integer IS NULL OR coalesce((SELECT r.version + e.version FROM sms_filter_rules r, sms_sender_epoch e WHERE r.brand_id = ${$.brandId}) = ${$.rulesVersion}::integer, false)`.as('current')))
    .with('ins', (w) =>
      w
        .insertInto('sms_records')
        .columns([...RECORD_COLUMNS])
        .expression((eb) =>
          eb
            // Raw: a set-returning function typed by the table's row type, which the builder has no call for.
            .selectFrom([sql<RecordRow & { ordinality: number }>`jsonb_populate_recordset(NULL::sms_records, ${$.rows}::jsonb) WITH ORDINALITY`.as('v'), 'proof'])
            .select(RECORD_COLUMNS.map((c) => `v.${c}` as const))
            .where('proof.current', '=', true)
            .orderBy('v.ordinality'),
        )
        .onConflict((oc) => oc.doNothing())
        .returning(['id', 'device_message_id', 'mode'])
        // Raw: the SMS time's expression (sms-time.ts) over the inserted row; named sms_time, it comes back as a Date.
        .returning(sql<Date>`${sql.raw(smsTimeSql('sms_records', '(SELECT d.clock_offset_ms FROM devices d WHERE d.id = sms_records.device_id)'))}`.as('sms_time')),
    )
    .selectFrom('proof')
    .leftJoin('ins', (j) => j.onTrue())
    .select(['proof.current', 'ins.id', 'ins.device_message_id', 'ins.mode', 'ins.sms_time']),
);

/** The read-back of records the matcher did not answer (ingestSmsBatch), compiled once: the records by one id array. */
const recordsAsStored = prepared((k, $: { ids: number[] }) =>
  k
    .selectFrom('sms_records as r')
    .leftJoin('transactions as t', 't.id', 'r.transaction_id')
    .select(['r.id', 'r.match_status', 'r.duplicate_of_id', 't.trx_id'])
    .where('r.id', '=', (eb) => eb.fn.any(eb.val($.ids))),
);

/**
 * Stores a batch of forwarded SMS, each exactly once, and answers each in input
 * order with its record.
 *
 * - The same `deviceMessageId` from this device again (a retried batch, or
 *   twice in one batch) stores nothing and answers the stored record as it is
 *   now: retries are safe.
 * - The same content under another message id, or from another phone of the
 *   brand, is stored as its own record with `duplicate` status pointing at the
 *   first one, and is never matched.
 *
 * Both rules rest on unique indexes ((device_id, device_message_id), and one
 * original per (brand_id, mode, content_hash)); INSERT ... ON CONFLICT DO NOTHING
 * waits for a racing insert to commit, so two phones forwarding the same SMS at
 * the same instant still produce one original. Rows are written in content-hash
 * order so two such batches lock in the same order and cannot deadlock.
 */
export async function ingestSmsBatch(em: Db, deps: IntakeDeps, caller: Caller, batch: readonly ForwardedSms[]): Promise<IntakeResult[]> {
  // Without a rules version nothing is refused: always the records.
  return (await ingestScreenedSmsBatch(em, deps, caller, batch, {}))!;
}

export interface ScreenedIntake {
  /**
   * The brand's filter rules version the batch was screened with
   * (filter-rules/service.ts, rememberedFilterRules): nothing is stored unless
   * it is still the brand's when the records' INSERT runs. Null: rules read
   * after the batch arrived, good for it whatever happened since.
   */
  rulesVersion: number | null;
  /**
   * Statements sent ahead of the INSERT, in the same round trip (db.ts
   * `pipelined`), each its own implicit transaction: they run whatever the
   * proof says (the phone's clock sample, which the INSERT's SMS times read).
   */
  ahead: ReadonlyArray<BoundStatement<unknown>>;
}

/**
 * ingestSmsBatch for a batch screened with filter rules that may have changed
 * since (see ScreenedIntake): null, with nothing of the batch stored, when they
 * did; the caller screens the batch again on the rules read now.
 */
export async function ingestScreenedSmsBatch(
  em: Db,
  deps: IntakeDeps,
  caller: Caller,
  batch: readonly ForwardedSms[],
  screened: Partial<ScreenedIntake>,
): Promise<IntakeResult[] | null> {
  // The phone's order: as it received them, ties (whole-second or capped times) in the order of the request.
  const phoneOrder = new Array<number>(batch.length);
  batch
    .map((sms, index) => ({ at: sms.receivedAt.getTime(), index }))
    .sort((a, b) => a.at - b.at || a.index - b.index)
    .forEach(({ index }, place) => (phoneOrder[index] = place));
  const hashed = batch.map((sms, index) => ({ sms, index, hash: smsContentHash(deps.hashKey, caller.brandId, sms.sender, sms.body) }));
  const ordered = [...hashed].sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : a.index - b.index));

  const sealed = ordered.map(({ sms }) => {
    const binding = smsRecordBinding({ ...caller, deviceMessageId: sms.deviceMessageId });
    return {
      sender: deps.cipher.encrypt(sms.sender, SMS_RECORD_CONTEXT.sender, binding),
      body: deps.cipher.encrypt(sms.body, SMS_RECORD_CONTEXT.body, binding),
    };
  });

  // No transaction around the writes: the batch's INSERT is one statement, atomic
  // on its own, and each write for a row it refused (the copy of a duplicate) is
  // too. Should the process die between them, the phone, which got no answer, sends
  // the batch again, and every message it finds stored by its id is answered as
  // stored. BEGIN and COMMIT were two of the round trips of every request
  // (BENCHMARKS.md). The records are committed before matching starts.
  const ids = new Array<number>(batch.length);
  const freshAt: Array<{ id: number; order: number }> = [];
  // Every record of the batch in one INSERT, in content-hash order (inserted in
  // the order of its rows, see insertRecords): one round trip for the batch
  // instead of one per SMS (BENCHMARKS.md). A row the unique indexes refuse
  // (the device's own message again, or content stored before) inserts
  // nothing and is settled one by one below, as before.
  // Only the first of a message id repeated in the batch is offered: a later one answers its record.
  const firsts = ordered.flatMap(({ sms, hash, index }, k) =>
    ordered.findIndex((o) => o.sms.deviceMessageId === sms.deviceMessageId) === k ? [recordRow(caller, sms, hash, sealed[k]!, null, phoneOrder[index]!)] : [],
  );
  // A lone surrogate (a phone's message id may hold one) is stored as U+FFFD, as the driver encodes a text parameter:
  // JSON.stringify would write it as an escape that PostgreSQL's jsonb refuses.
  const rows = JSON.stringify(firsts, (_, v: unknown) => (typeof v === 'string' ? v.toWellFormed() : v));
  const insert = { rows, brandId: caller.brandId, rulesVersion: screened.rulesVersion ?? null };
  const answer = (await pipelined(em, ...(screened.ahead ?? []), insertRecords.bind(em, insert))).at(-1) as Awaited<ReturnType<typeof insertRecords.execute>>;
  // Nothing was stored: screened again by the caller, on the rules as they are now.
  if (!answer[0]!.current) return null;
  const inserted = answer.flatMap((r) => (r.id === null ? [] : [{ id: r.id, device_message_id: r.device_message_id!, mode: r.mode!, sms_time: r.sms_time! }]));
  const insertedRow = new Map(inserted.map((r) => [r.device_message_id, r]));
  const stored = new Map<number, StoredSms>();
  for (const [k, { sms, index, hash }] of ordered.entries()) {
    const row = insertedRow.get(sms.deviceMessageId);
    if (row !== undefined) {
      insertedRow.delete(sms.deviceMessageId);
      ids[index] = row.id;
      freshAt.push({ id: row.id, order: phoneOrder[index]! });
      stored.set(row.id, { brandId: caller.brandId, deviceId: caller.deviceId, mode: row.mode, sender: sms.sender, body: sms.body, smsTime: row.sms_time });
      continue;
    }
    const encrypted = sealed[k]!;
    const own = await findOwn(em, caller, sms.deviceMessageId);
    if (own !== null) {
      ids[index] = own;
      continue;
    }
    // Originals are one per brand and mode (the record takes its device's mode):
    // a test phone's copy must never make a live phone's SMS a duplicate.
    const original = await em
      .selectFrom('sms_records')
      .select('id')
      .where('brand_id', '=', caller.brandId)
      .where('mode', '=', (eb) => eb.selectFrom('devices').select('devices.mode').where('devices.id', '=', caller.deviceId))
      .where('content_hash', '=', hash)
      .where('duplicate_of_id', 'is', null)
      .executeTakeFirstOrThrow();
    const duplicate = await insertRecord(em, caller, sms, hash, encrypted, original.id, phoneOrder[index]!);
    // Null only if this device's own retry of the message committed meanwhile.
    ids[index] = duplicate ?? (await findOwn(em, caller, sms.deviceMessageId))!;
  }
  // Matched in the order the phone received them (its time, then the request's
  // order): the balance chain checks each SMS against the one before it.
  const fresh = freshAt.sort((a, b) => a.order - b.order).map((f) => f.id);

  // Records the matcher reports as decided are answered as it committed them, the
  // rest as read now: reading back records whose state we already know was one
  // more round trip per request (BENCHMARKS.md). Only new originals are
  // matched, and those have no duplicate_of.
  type Answer = { match_status: SmsRecordStatus; duplicate_of_id: number | null; trx_id: string | null };
  const byId = new Map<number, Answer>();
  if (deps.match && fresh.length > 0) {
    try {
      const decided = await deps.match(em, fresh, stored);
      for (const id of fresh) {
        const d = decided?.get(id);
        if (d) byId.set(id, { match_status: d.matchStatus, duplicate_of_id: null, trx_id: d.trxId });
      }
    } catch (err) {
      deps.onMatchError?.(err);
    }
  }

  const unknown = [...new Set(ids)].filter((id) => !byId.has(id));
  if (unknown.length > 0) {
    const rows = await recordsAsStored.execute(em, { ids: unknown });
    for (const r of rows) byId.set(r.id, r);
  }
  return batch.map((sms, i) => {
    const r = byId.get(ids[i]!)!;
    return {
      deviceMessageId: sms.deviceMessageId,
      id: ids[i]!,
      matchStatus: r.match_status,
      trxId: r.trx_id,
      duplicateOf: r.duplicate_of_id,
    };
  });
}
