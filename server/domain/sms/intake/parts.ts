import { createHash } from 'node:crypto';
import { transaction, type Db } from '../../db.ts';
import { screenSms, type ScreenResult } from '../../filter-rules/screen.ts';
import type { FilterRules } from '../../filter-rules/defaults.ts';
import { smsPartSetHash } from './content-hash.ts';
import { deleteJoinedPartsBefore, deleteParts, insertPart, lockPartSet, markPartsJoined, partOfMessage, staleWaitingSets, waitingParts } from './queries.ts';
import { SMS_PART_CONTEXT, smsPartBinding } from './record-cipher.ts';
import { ingestSmsBatch, type ForwardedSms, type IntakeDeps } from './service.ts';

/**
 * Long SMS (docs/matching.md section 1, "Long SMS"). A wallet SMS longer than
 * one SMS arrives as parts, each with a User Data Header naming the set's
 * reference, the part's index and the set's count (3GPP TS 23.040). The app
 * joins parts it received together (device SDK `joinSmsParts`); a part it
 * forwards alone carries `part`, and waits here, encrypted, until every part of
 * its set has arrived. The set is the device's parts with the same sender
 * (exactly as received), SIM slot, reference and count. The part that
 * completes it joins the texts in index order, with no separator (a header
 * splits the text anywhere, even inside a word), and that whole, screened with
 * the filter rules, becomes ONE SMS record through the ordinary intake, in the
 * same transaction: a half is never stored as a record, never parsed.
 *
 * The joined record's message id is `parts:<reference>:<count>:<id of part 1>`,
 * its time the earliest part's. Joined parts keep only their key, for 24 hours,
 * so a retried part is answered with the joined record; a set still incomplete
 * after 24 hours is stored as one `no_match` record (`incomplete_parts`,
 * whatever parts arrived, joined in index order), never matched.
 */

export interface SmsPartHeader {
  reference: number;
  index: number;
  count: number;
}

export type ForwardedPart = ForwardedSms & { part: SmsPartHeader };

/** What became of a forwarded part. */
export type PartOutcome =
  | { kind: 'waiting' }
  | { kind: 'screened'; screen: ScreenResult & { forward: false } }
  /** The record of its joined set; `fresh`: new, for matching. */
  | { kind: 'record'; id: number; fresh: boolean };

/** How long a part waits for the rest of its set. */
export const PART_WAIT_MS = 24 * 60 * 60 * 1000;

type Caller = { brandId: number; deviceId: number };
type WaitingRow = Awaited<ReturnType<typeof waitingParts>>[number];

function joinedMessageId(reference: number, count: number, firstId: string): string {
  const id = `parts:${reference}:${count}:${firstId}`;
  return id.length <= 128 ? id : `parts:${reference}:${count}:sha256:${createHash('sha256').update(firstId, 'utf8').digest('hex')}`;
}

/** The parts' texts joined in index order, as one SMS. */
function joinRows(deps: IntakeDeps, caller: Caller, rows: WaitingRow[]): ForwardedSms {
  const open = (r: WaitingRow, token: string, context: string) =>
    deps.cipher.decrypt(token, context, smsPartBinding({ ...caller, reference: r.reference, deviceMessageId: r.device_message_id }));
  const first = rows[0]!;
  return {
    deviceMessageId: joinedMessageId(first.reference, first.part_count, first.device_message_id),
    sender: open(first, first.sender!, SMS_PART_CONTEXT.sender),
    body: rows.map((r) => open(r, r.body_encrypted!, SMS_PART_CONTEXT.body)).join(''),
    receivedAt: new Date(Math.min(...rows.map((r) => r.received_at.getTime()))),
    simSlot: first.sim_slot,
    receivingNumber: rows.find((r) => r.receiving_number !== null)?.receiving_number ?? null,
  };
}

/**
 * Stores one forwarded part and, when it completes its set, joins the set into
 * one record (without matching it: the caller matches `fresh` records after
 * the commit, as intake does).
 */
async function takePart(em: Db, deps: IntakeDeps, caller: Caller, rules: FilterRules, sms: ForwardedPart): Promise<PartOutcome> {
  const stored = await partOfMessage(em, caller.deviceId, sms.deviceMessageId);
  if (stored) return stored.joined_record_id !== null ? { kind: 'record', id: stored.joined_record_id, fresh: false } : { kind: 'waiting' };
  const { reference, index, count } = sms.part;
  const groupHash = smsPartSetHash(deps.hashKey, caller.brandId, { sender: sms.sender, simSlot: sms.simSlot, reference, count });
  const binding = smsPartBinding({ ...caller, reference, deviceMessageId: sms.deviceMessageId });
  return transaction(em, async (tx) => {
    await lockPartSet(tx, caller.deviceId, groupHash);
    await insertPart(tx, {
      brand_id: caller.brandId,
      device_id: caller.deviceId,
      device_message_id: sms.deviceMessageId,
      group_hash: groupHash,
      reference,
      part_count: count,
      part_index: index,
      sender: deps.cipher.encrypt(sms.sender, SMS_PART_CONTEXT.sender, binding),
      body_encrypted: deps.cipher.encrypt(sms.body, SMS_PART_CONTEXT.body, binding),
      received_at: sms.receivedAt,
      sim_slot: sms.simSlot,
      receiving_number: sms.receivingNumber ?? null,
    });
    const rows = await waitingParts(tx, { deviceId: caller.deviceId, groupHash, count });
    if (rows.length < count) return { kind: 'waiting' } as const;
    const whole = joinRows(deps, caller, rows);
    const ids = rows.map((r) => r.id);
    // The filter rules judge the whole text only: a refused SMS leaves nothing, parts included.
    const screen = screenSms(rules, whole);
    if (!screen.forward) {
      await deleteParts(tx, ids);
      return { kind: 'screened', screen } as const;
    }
    const [record] = await ingestSmsBatch(tx, { cipher: deps.cipher, hashKey: deps.hashKey }, caller, [whole]);
    await markPartsJoined(tx, ids, record!.id);
    return { kind: 'record', id: record!.id, fresh: record!.matchStatus === 'pending' } as const;
  });
}

/**
 * The forwarded parts of a batch, in input order (ingestForwardedBatch). A part
 * waiting when it was taken, whose set a later part of the same batch
 * completed, is answered with the joined record too.
 */
export async function takeParts(em: Db, deps: IntakeDeps, caller: Caller, rules: FilterRules, parts: readonly ForwardedPart[]): Promise<PartOutcome[]> {
  const outcomes: PartOutcome[] = [];
  for (const sms of parts) outcomes.push(await takePart(em, deps, caller, rules, sms));
  const setOf = (sms: ForwardedPart) => smsPartSetHash(deps.hashKey, caller.brandId, { sender: sms.sender, simSlot: sms.simSlot, reference: sms.part.reference, count: sms.part.count });
  const completed = new Map<string, PartOutcome>();
  parts.forEach((sms, i) => {
    const o = outcomes[i]!;
    if (o.kind !== 'waiting') completed.set(setOf(sms), o);
  });
  return outcomes.map((o, i) => (o.kind === 'waiting' ? (completed.get(setOf(parts[i]!)) ?? o) : o));
}

/**
 * The minute sweep's work (match-pending-sms.job.ts registers it): a set still
 * incomplete 24 hours after its first part is stored as one `no_match` record
 * (`incomplete_parts`: evidence an operator can read, never matched), or
 * nothing when the filter rules refuse what arrived; tombstones of joined
 * parts older than 24 hours are removed.
 */
export async function settleStaleParts(
  em: Db,
  deps: Pick<IntakeDeps, 'cipher' | 'hashKey'>,
  getRules: (tx: Db, brandId: number) => Promise<FilterRules>,
  now: Date = new Date(),
): Promise<{ settled: number; removed: number }> {
  const before = new Date(now.getTime() - PART_WAIT_MS);
  let settled = 0;
  for (const set of await staleWaitingSets(em, before, 100)) {
    const caller = { brandId: Number(set.brand_id), deviceId: Number(set.device_id) };
    await transaction(em, async (tx) => {
      await lockPartSet(tx, caller.deviceId, set.group_hash);
      const rows = await waitingParts(tx, { deviceId: caller.deviceId, groupHash: set.group_hash, count: set.part_count });
      if (rows.length === 0) return;
      const whole = { ...joinRows(deps, caller, rows), incompleteParts: true as const };
      await deleteParts(
        tx,
        rows.map((r) => r.id),
      );
      if (!screenSms(await getRules(tx, caller.brandId), whole).forward) return;
      await ingestSmsBatch(tx, deps, caller, [whole]);
      settled++;
    });
  }
  const removed = await deleteJoinedPartsBefore(em, before);
  return { settled, removed };
}
