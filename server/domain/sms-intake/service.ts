import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
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

async function insertRecord(tx: EntityManager, caller: Caller, sms: ForwardedSms, hash: string, encrypted: Sealed, duplicateOf: number | null): Promise<number | null> {
  const rows = await tx.execute<Array<{ id: string }>>(
    `INSERT INTO sms_records (brand_id, device_id, device_message_id, content_hash, sender, body_encrypted, received_at, sim_slot, match_status, duplicate_of_id, reason, reason_code, entry, entered_by, operator_name)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING
     RETURNING id`,
    [
      caller.brandId, caller.deviceId, sms.deviceMessageId, hash, encrypted.sender, encrypted.body, sms.receivedAt, sms.simSlot,
      duplicateOf === null ? 'pending' : 'duplicate', duplicateOf,
      duplicateOf === null ? null : `same sender and text as SMS record ${duplicateOf}, forwarded before`,
      duplicateOf === null ? null : 'duplicate_content',
      sms.pasted ? 'pasted' : 'forwarded', sms.pasted?.enteredBy ?? null, sms.pasted?.operatorName ?? null,
    ],
  );
  return rows[0] ? Number(rows[0].id) : null;
}

async function findOwn(tx: EntityManager, caller: Caller, deviceMessageId: string): Promise<number | null> {
  const rows = await tx.execute<Array<{ id: string }>>('SELECT id FROM sms_records WHERE device_id = ? AND device_message_id = ?', [caller.deviceId, deviceMessageId]);
  return rows[0] ? Number(rows[0].id) : null;
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
export async function ingestSmsBatch(em: EntityManager, deps: IntakeDeps, caller: Caller, batch: readonly ForwardedSms[]): Promise<IntakeResult[]> {
  const prepared = batch.map((sms, index) => ({ sms, index, hash: smsContentHash(deps.hashKey, caller.brandId, sms.sender, sms.body) }));
  const ordered = [...prepared].sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : a.index - b.index));

  const store = async (tx: EntityManager) => {
    const ids = new Array<number>(batch.length);
    const fresh: Array<{ id: number; at: number }> = [];
    for (const { sms, index, hash } of ordered) {
      const binding = smsRecordBinding({ ...caller, deviceMessageId: sms.deviceMessageId });
      const encrypted = {
        sender: deps.cipher.encrypt(sms.sender, SMS_RECORD_CONTEXT.sender, binding),
        body: deps.cipher.encrypt(sms.body, SMS_RECORD_CONTEXT.body, binding),
      };
      const inserted = await insertRecord(tx, caller, sms, hash, encrypted, null);
      if (inserted !== null) {
        ids[index] = inserted;
        fresh.push({ id: inserted, at: sms.receivedAt.getTime() });
        continue;
      }
      const own = await findOwn(tx, caller, sms.deviceMessageId);
      if (own !== null) {
        ids[index] = own;
        continue;
      }
      // Originals are one per brand and mode (the record takes its device's mode):
      // a test phone's copy must never make a live phone's SMS a duplicate.
      const original = await tx.execute<Array<{ id: string }>>(
        'SELECT id FROM sms_records WHERE brand_id = ? AND mode = (SELECT mode FROM devices WHERE id = ?) AND content_hash = ? AND duplicate_of_id IS NULL',
        [caller.brandId, caller.deviceId, hash],
      );
      const duplicate = await insertRecord(tx, caller, sms, hash, encrypted, Number(original[0]!.id));
      // Null only if this device's own retry of the message committed meanwhile.
      ids[index] = duplicate ?? (await findOwn(tx, caller, sms.deviceMessageId))!;
    }
    // Matched in the order the phone received them (then id): the balance chain
    // checks each SMS against the one before it, whatever order the batch had.
    return { ids, fresh: fresh.sort((a, b) => a.at - b.at || a.id - b.id).map((f) => f.id) };
  };
  // A batch of one makes one write (the record, or its copy), atomic on its own:
  // BEGIN and COMMIT around it were two of the round trips of an SMS forwarded as
  // it arrives (BENCHMARKS.md). It is still committed before matching starts.
  const { ids, fresh } = batch.length === 1 ? await store(em) : await em.transactional(store);

  // Records the matcher reports as decided are answered as it committed them, the
  // rest as read now: reading back records whose state we already know was one
  // more round trip per request (BENCHMARKS.md). Only new originals are
  // matched, and those have no duplicate_of.
  type Answer = { match_status: SmsRecordStatus; duplicate_of_id: string | null; trx_id: string | null };
  const byId = new Map<number, Answer>();
  if (deps.match && fresh.length > 0) {
    try {
      const decided = await deps.match(em, fresh);
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
    const rows = await em.execute<Array<{ id: string } & Answer>>(
      `SELECT r.id, r.match_status, r.duplicate_of_id, t.trx_id
         FROM sms_records r LEFT JOIN transactions t ON t.id = r.transaction_id
        WHERE r.id = ANY(ARRAY[?]::bigint[])`,
      [unknown],
    );
    for (const r of rows) byId.set(Number(r.id), r);
  }
  return batch.map((sms, i) => {
    const r = byId.get(ids[i]!)!;
    return {
      deviceMessageId: sms.deviceMessageId,
      id: ids[i]!,
      matchStatus: r.match_status,
      trxId: r.trx_id,
      duplicateOf: r.duplicate_of_id === null ? null : Number(r.duplicate_of_id),
    };
  });
}
