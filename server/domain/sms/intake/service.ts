import type { Db } from '../../db.ts';
import { insertRecordRow, insertRecordRows, originalOf, recordAnswers, recordOfMessage, type RecordValues } from './queries.ts';
import type { PiiCipher } from '../../../infra/crypto/pii-cipher.ts';
import type { SmsRecordStatus } from './entities.ts';
import { smsContentHash } from './content-hash.ts';
import type { MatchSmsRecords } from './matching-seam.ts';
import { SMS_RECORD_CONTEXT, smsRecordBinding } from './record-cipher.ts';

export interface ForwardedSms {
  deviceMessageId: string;
  sender: string;
  body: string;
  receivedAt: Date;
  simSlot: number | null;
  /** The receiving SIM's number, when the phone knows it. */
  receivingNumber?: string | null;
  /** Set for an SMS an operator pasted by hand (recovery/paste.ts); absent for the phone's own. */
  pasted?: { enteredBy: string; operatorName: string | null };
  /**
   * Set for what is left of a long SMS whose parts never all arrived
   * (parts.ts): stored `no_match` (`incomplete_parts`) and never matched, so a
   * half is never parsed.
   */
  incompleteParts?: true;
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

function recordRow(caller: Caller, sms: ForwardedSms, hash: string, encrypted: Sealed, duplicateOf: number | null, phoneOrder: number): RecordValues {
  return {
    brand_id: caller.brandId,
    device_id: caller.deviceId,
    device_message_id: sms.deviceMessageId,
    content_hash: hash,
    sender: encrypted.sender,
    body_encrypted: encrypted.body,
    received_at: sms.receivedAt,
    sim_slot: sms.simSlot,
    receiving_number: sms.receivingNumber ?? null,
    phone_order: phoneOrder,
    match_status: duplicateOf !== null ? ('duplicate' as const) : sms.incompleteParts ? ('no_match' as const) : ('pending' as const),
    duplicate_of_id: duplicateOf,
    reason:
      duplicateOf !== null
        ? `same sender and text as SMS record ${duplicateOf}, forwarded before`
        : sms.incompleteParts
          ? 'parts of a long SMS that never all arrived (24 hours): never parsed'
          : null,
    reason_code: duplicateOf !== null ? 'duplicate_content' : sms.incompleteParts ? 'incomplete_parts' : null,
    entry: sms.pasted ? ('pasted' as const) : ('forwarded' as const),
    entered_by: sms.pasted?.enteredBy ?? null,
    operator_name: sms.pasted?.operatorName ?? null,
  };
}

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
  // the order of its rows, see queries.ts): one round trip for the batch
  // instead of one per SMS (BENCHMARKS.md). A row the unique indexes refuse
  // (the device's own message again, or content stored before) inserts
  // nothing and is settled one by one below, as before.
  // Only the first of a message id repeated in the batch is offered: a later one answers its record.
  const firsts = ordered.flatMap(({ sms, hash, index }, k) =>
    ordered.findIndex((o) => o.sms.deviceMessageId === sms.deviceMessageId) === k ? [recordRow(caller, sms, hash, sealed[k]!, null, phoneOrder[index]!)] : [],
  );
  const inserted = await insertRecordRows(em, firsts);
  const insertedRow = new Map(inserted.map((r) => [r.device_message_id, r]));
  for (const [k, { sms, index, hash }] of ordered.entries()) {
    const row = insertedRow.get(sms.deviceMessageId);
    if (row !== undefined) {
      insertedRow.delete(sms.deviceMessageId);
      ids[index] = row.id;
      if (!sms.incompleteParts) freshAt.push({ id: row.id, order: phoneOrder[index]! });
      continue;
    }
    const encrypted = sealed[k]!;
    const own = await recordOfMessage(em, caller.deviceId, sms.deviceMessageId);
    if (own !== null) {
      ids[index] = own;
      continue;
    }
    // Originals are one per brand and mode (the record takes its device's mode):
    // a test phone's copy must never make a live phone's SMS a duplicate.
    const original = await originalOf(em, { brandId: caller.brandId, deviceId: caller.deviceId, contentHash: hash });
    const duplicate = await insertRecordRow(em, recordRow(caller, sms, hash, encrypted, original, phoneOrder[index]!));
    // Null only if this device's own retry of the message committed meanwhile.
    ids[index] = duplicate ?? (await recordOfMessage(em, caller.deviceId, sms.deviceMessageId))!;
  }
  // Matched in the order the phone received them (its time, then the request's
  // order): the balance chain checks each SMS against the one before it.
  const fresh = freshAt.sort((a, b) => a.order - b.order).map((f) => f.id);

  const byId = await matchAndAnswer(em, deps, fresh, ids);
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

type Answer = { match_status: SmsRecordStatus; duplicate_of_id: number | null; trx_id: string | null };

/**
 * Matches the new records `fresh` (deps.match; a failure leaves them pending
 * for the sweep) and answers every record of `ids` with its state.
 */
export async function matchAndAnswer(em: Db, deps: IntakeDeps, fresh: readonly number[], ids: readonly number[]): Promise<Map<number, Answer>> {
  // Records the matcher reports as decided are answered as it committed them, the
  // rest as read now: reading back records whose state we already know was one
  // more round trip per request (BENCHMARKS.md). Only new originals are
  // matched, and those have no duplicate_of.
  const byId = new Map<number, Answer>();
  if (deps.match && fresh.length > 0) {
    try {
      const decided = await deps.match(em, [...fresh]);
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
    for (const r of await recordAnswers(em, unknown)) byId.set(r.id, r);
  }
  return byId;
}
