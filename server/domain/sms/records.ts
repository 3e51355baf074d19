import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiBinding, PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { SMS_RECORD_CONTEXT, decryptSmsSender, smsRecordBinding, smsRowBinding } from '../sms-intake/record-cipher.ts';
import type { StoredSmsTemplate } from '../gateways/entities.ts';
import { pgIdArray } from '../../infra/database/pg-array.ts';
import { pgDate } from '../../infra/database/pg-date.ts';
import type { ChainState, MatchStatus, ReasonCode, Suggestion } from './matcher.ts';

/** The SMS time of `r` (an sms_records row) joined with its device `d`: see PendingSmsRecord.smsTime. */
export const SMS_TIME_SQL = `LEAST(r.received_at - make_interval(secs => COALESCE(d.clock_offset_ms, 0) / 1000.0), r.server_received_at)`;

/** Cipher contexts of the encrypted columns of `sms_records` (see sms-intake/record-cipher.ts). */
export const SMS_BODY_CONTEXT = SMS_RECORD_CONTEXT.body;
export const SMS_SENDER_NUMBER_CONTEXT = SMS_RECORD_CONTEXT.senderNumber;


export interface PendingSmsRecord {
  id: number;
  brandId: number;
  deviceId: number;
  /** Its device's mode: evidence only for payments of this mode. */
  mode: Mode;
  /** In clear (decrypted when claimed). */
  sender: string;
  bodyEncrypted: string;
  /** The brand and natural key every encrypted value of the record is bound to. */
  binding: PiiBinding;
  /**
   * "The SMS time" of every timing rule: the phone's receipt time corrected by
   * the phone's clock offset (devices.clock_offset_ms), but never later than
   * the server's. The phone knows when the SMS really arrived (a phone that was
   * offline forwards late), while a phone clock running ahead must not make an
   * SMS look newer than transactions created after it.
   */
  smsTime: Date;
}

/** A gateway with official SMS senders, as claimPendingRecord reads it (candidates.ts maps it). */
export interface GatewaySmsRow {
  id: string | number;
  code: string;
  sms_senders: string[];
  sms_templates: StoredSmsTemplate[];
  review_above?: string | null;
}

/**
 * Takes a `pending` record for matching, locked; null when it is not pending
 * (any more: a concurrent matcher of the same record is waited for, then sees
 * it decided). NO KEY UPDATE, not UPDATE: a duplicate being inserted holds a
 * KEY SHARE lock on this row (its duplicate_of_id foreign key), which must not
 * delay, let alone skip, the original's matching.
 *
 * The same statement reads what deciding it needs besides the record: every
 * gateway with official SMS senders (as loadGatewaySmsConfigs reads them) and
 * the stored values of `settingKeys`. Those were two more round trips per SMS
 * (BENCHMARKS.md); they are still read in the record's own transaction.
 */
export async function claimPendingRecord(
  tx: EntityManager,
  id: number,
  settingKeys: readonly string[],
  cipher: PiiCipher,
): Promise<(PendingSmsRecord & { gateways: GatewaySmsRow[]; settings: Map<string, unknown> }) | null> {
  const [row] = await tx.execute<
    Array<{
      id: string; brand_id: string; mode: Mode; device_id: string; device_message_id: string; sender: string; body_encrypted: string;
      sms_time: string | Date; gateways: GatewaySmsRow[]; settings: Record<string, unknown>;
    }>
  >(
    `SELECT r.id, r.brand_id, r.mode, r.device_id, r.device_message_id, r.sender, r.body_encrypted, ${SMS_TIME_SQL} AS sms_time,
            (SELECT COALESCE(json_agg(g ORDER BY g.sort_order, g.id), '[]'::json)
               FROM (SELECT id, code, sms_senders, sms_templates, review_above::text AS review_above, sort_order FROM gateways WHERE cardinality(sms_senders) > 0) g) AS gateways,
            (SELECT COALESCE(json_object_agg(s.key, s.value), '{}'::json) FROM settings s WHERE s.key IN (?)) AS settings
       FROM sms_records r JOIN devices d ON d.id = r.device_id WHERE r.id = ? AND r.match_status = 'pending'
        FOR NO KEY UPDATE OF r`,
    [[...settingKeys], id],
  );
  if (!row) return null;
  const binding = smsRowBinding(row);
  return {
    id: Number(row.id),
    brandId: Number(row.brand_id),
    deviceId: Number(row.device_id),
    mode: row.mode,
    sender: decryptSmsSender(cipher, row.sender, binding),
    bodyEncrypted: row.body_encrypted,
    binding,
    smsTime: pgDate(row.sms_time),
    gateways: row.gateways,
    settings: new Map(Object.entries(row.settings)),
  };
}

/** What matching decided about one record: stored on it, so an admin can see why. */
export interface SmsOutcome {
  status: MatchStatus;
  gatewayId: number | null;
  parsed: {
    direction: 'in' | 'out';
    kind: string | null;
    amount: string;
    trxId: string | null;
    senderNumber: string | null;
    balance: string | null;
    fee: string | null;
  } | null;
  transactionId: number | null;
  confidence: number;
  candidateIds: number[];
  reason: string;
  reasonCode: ReasonCode;
  suggestions: Suggestion[];
  chain: { wallet: string; smsTime: Date; state: ChainState; previousId: number | null; expected: string | null } | null;
}

/** Writes the outcome onto a record still `pending` (the caller holds its lock). */
export async function storeOutcome(tx: EntityManager, cipher: PiiCipher, rec: { id: number; binding: PiiBinding }, o: SmsOutcome): Promise<void> {
  const id = rec.id;
  const sender = o.parsed?.senderNumber ? cipher.encrypt(o.parsed.senderNumber, SMS_SENDER_NUMBER_CONTEXT, rec.binding) : null;
  const updated = await tx.execute<Array<{ id: string }>>(
    `UPDATE sms_records
        SET match_status = ?, gateway_id = ?, parsed_amount = ?, parsed_trx_id = ?, parsed_sender_number = ?,
            direction = ?, kind = ?, parsed_balance = ?, parsed_fee = ?,
            wallet_key = ?, sms_time = ?, chain_state = ?, chain_previous_id = ?, chain_expected_balance = ?,
            transaction_id = ?, confidence = ?, candidate_ids = ?::bigint[], reason = ?, reason_code = ?, suggestions = ?::jsonb,
            matched_at = CASE WHEN ? THEN now() END, updated_at = now()
      WHERE id = ? AND match_status = 'pending'
      RETURNING id`,
    [
      o.status,
      o.gatewayId,
      o.parsed?.amount ?? null,
      o.parsed?.trxId ?? null,
      sender,
      o.parsed?.direction ?? null,
      o.parsed?.kind?.slice(0, 40) ?? null,
      o.parsed?.balance ?? null,
      o.parsed?.fee ?? null,
      o.chain?.wallet ?? null,
      o.chain?.smsTime ?? null,
      o.chain?.state ?? null,
      o.chain?.previousId ?? null,
      o.chain?.expected ?? null,
      o.transactionId,
      o.confidence.toFixed(4),
      pgIdArray(o.candidateIds),
      o.reason,
      o.reasonCode,
      JSON.stringify(o.suggestions.map((s) => ({ transaction_id: s.transactionId, why: s.why, distance: s.distance }))),
      o.status === 'matched',
      id,
    ],
  );
  // The caller locked the row while pending, so this cannot happen
  // unless that invariant is broken; failing rolls the whole decision back.
  if (updated.length !== 1) throw new Error(`SMS record ${id} was no longer pending when its outcome was stored`);
}

/** A parsed, not yet matched record as the submission direction reads it. */
export interface StoredEvidenceRow {
  id: number;
  amount: string;
  trxId: string;
  smsTime: Date;
  /** PII cipher token of the payer number the SMS names, or null (bound with `binding`). */
  senderNumberEncrypted: string | null;
  binding: PiiBinding;
  chainState: ChainState;
  matchStatus: MatchStatus;
  candidateIds: number[];
  resolvedAt: Date | null;
}

interface EvidenceRow {
  id: string;
  parsed_amount: string;
  parsed_trx_id: string;
  sms_time: string | Date;
  parsed_sender_number: string | null;
  device_id: string;
  device_message_id: string;
  chain_state: ChainState;
  match_status: MatchStatus;
  candidate_ids: Array<string | number> | null;
  resolved_at: string | Date | null;
}

/**
 * The brand's parsed records of one mode (their devices') carrying `trxId` on
 * the given gateways, any status, locked in id order (after the caller's
 * transaction locks).
 */
export async function lockEvidenceByTrxId(tx: EntityManager, brandId: number, mode: Mode, gatewayIds: readonly number[], trxId: string): Promise<StoredEvidenceRow[]> {
  const rows = await tx.execute<EvidenceRow[]>(
    `SELECT r.id, r.parsed_amount::text AS parsed_amount, r.parsed_trx_id, COALESCE(r.sms_time, ${SMS_TIME_SQL}) AS sms_time,
            r.parsed_sender_number, r.device_id, r.device_message_id, r.chain_state, r.match_status, r.candidate_ids, r.resolved_at
       FROM sms_records r JOIN devices d ON d.id = r.device_id
      WHERE r.brand_id = ? AND r.mode = ? AND r.parsed_trx_id = upper(?) AND r.gateway_id = ANY(?::bigint[])
      ORDER BY r.id
        FOR NO KEY UPDATE OF r`,
    [brandId, mode, trxId.trim(), pgIdArray(gatewayIds)],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    amount: r.parsed_amount,
    trxId: r.parsed_trx_id,
    smsTime: pgDate(r.sms_time),
    senderNumberEncrypted: r.parsed_sender_number,
    binding: smsRecordBinding({ brandId, deviceId: r.device_id, deviceMessageId: r.device_message_id }),
    chainState: r.chain_state,
    matchStatus: r.match_status,
    candidateIds: (r.candidate_ids ?? []).map(Number),
    resolvedAt: r.resolved_at === null ? null : pgDate(r.resolved_at),
  }));
}
