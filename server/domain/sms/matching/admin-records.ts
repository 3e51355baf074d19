import { AppError } from '../../../../contract/common/errors.ts';
import { smsResolutions, type Mode, type SmsDirection } from '../../../../contract/vocabulary.ts';
import type { PiiCipher } from '../../../infra/crypto/pii-cipher.ts';
import { recordAudit, type AuditActor } from '../../audit/service.ts';
import { transaction, type Db } from '../../db.ts';
import { trimDecimal } from '../../payments/view.ts';
import type { SmsRecordStatus } from '../intake/entities.ts';
import { decryptSmsBody, decryptSmsSender, SMS_RECORD_CONTEXT, smsRowBinding } from '../intake/record-cipher.ts';
import type { ChainState } from './matcher.ts';
import { maskPayerNumber } from './payer-number.ts';
import { adminRecordPage, adminRecordRow, type AdminRecordRow, type SmsRecordFilter } from './queries/admin-records.ts';

export interface AdminSmsRecord {
  id: number;
  brand_id: number;
  mode: Mode;
  device_id: number;
  device_message_id: string;
  sender: string | null;
  received_at: string;
  server_received_at: string;
  sim_slot: number | null;
  receiving_number: string | null;
  match_status: SmsRecordStatus;
  duplicate_of: number | null;
  gateway: string | null;
  parsed_amount: string | null;
  parsed_trx_id: string | null;
  transaction_id: number | null;
  trx_id: string | null;
  confidence: string | null;
  candidate_ids: number[];
  reason: string | null;
  reason_code: string | null;
  suggestions: Array<{ transaction_id: number; why: string; distance: number | null }>;
  direction: SmsDirection | null;
  kind: string | null;
  parsed_balance: string | null;
  parsed_fee: string | null;
  parsed_sender_number: string | null;
  sms_time: string | null;
  balance_chain: { state: Exclude<ChainState, undefined>; previous_id: number | null; expected_balance: string | null };
  matched_at: string | null;
  resolution: (typeof smsResolutions)[number] | null;
  resolved_by: string | null;
  resolved_at: string | null;
  resolution_note: string | null;
  created_at: string;
  text_expired_at: string | null;
  body?: string;
}

/**
 * The sender is decrypted for every record (lists show it, as they did when it
 * was stored in clear); the body only on request. A value that fails
 * authentication (copied from another record, or tampered) fails the read
 * rather than showing something that is not this record's.
 */
function toRecord(r: AdminRecordRow, cipher: PiiCipher, withBody: boolean): AdminSmsRecord {
  const binding = smsRowBinding(r);
  const out: AdminSmsRecord = {
    id: r.id,
    brand_id: r.brand_id,
    mode: r.mode,
    device_id: r.device_id,
    device_message_id: r.device_message_id,
    sender: r.sender === null ? null : decryptSmsSender(cipher, r.sender, binding),
    received_at: r.received_at.toISOString(),
    server_received_at: r.server_received_at.toISOString(),
    sim_slot: r.sim_slot,
    receiving_number: r.receiving_number,
    match_status: r.match_status,
    duplicate_of: r.duplicate_of_id,
    gateway: r.gateway_code,
    parsed_amount: r.parsed_amount,
    parsed_trx_id: r.parsed_trx_id,
    transaction_id: r.transaction_id,
    trx_id: r.trx_id,
    confidence: trimDecimal(r.confidence),
    candidate_ids: r.candidate_ids ?? [],
    reason: r.reason,
    reason_code: r.reason_code,
    suggestions: r.suggestions ?? [],
    direction: r.direction,
    kind: r.kind,
    parsed_balance: r.parsed_balance,
    parsed_fee: r.parsed_fee,
    parsed_sender_number: r.parsed_sender_number === null ? null : maskPayerNumber(cipher.decrypt(r.parsed_sender_number, SMS_RECORD_CONTEXT.senderNumber, binding)),
    sms_time: r.sms_time?.toISOString() ?? null,
    balance_chain: { state: r.chain_state, previous_id: r.chain_previous_id, expected_balance: r.chain_expected_balance },
    matched_at: r.matched_at?.toISOString() ?? null,
    resolution: r.resolution,
    resolved_by: r.resolved_by,
    resolved_at: r.resolved_at?.toISOString() ?? null,
    resolution_note: r.resolution_note,
    created_at: r.created_at.toISOString(),
    text_expired_at: r.text_expired_at?.toISOString() ?? null,
  };
  // An expired record has no text to add: `text_expired_at` says why.
  if (withBody && r.body_encrypted !== null) out.body = decryptSmsBody(cipher, r.body_encrypted, binding);
  return out;
}

/**
 * Decrypting SMS text is an admin reading personal data, so it happens only on
 * request and leaves a trace: one audit row per read naming the record ids
 * (never the text), written in the same transaction as the read.
 */
async function readBodies(em: Db, who: AuditActor, rows: AdminRecordRow[], cipher: PiiCipher): Promise<AdminSmsRecord[]> {
  if (rows.length === 0) return [];
  return transaction(em, async (tx) => {
    const ids = rows.map((r) => r.id);
    await recordAudit(tx, who, {
      action: 'sms_record.read_body',
      targetType: 'sms_record',
      targetId: ids.length === 1 ? ids[0]! : null,
      brandId: new Set(rows.map((r) => r.brand_id)).size === 1 ? rows[0]!.brand_id : null,
      after: { sms_record_ids: ids },
    });
    return rows.map((r) => toRecord(r, cipher, true));
  });
}

export type { SmsRecordFilter };

/** Newest first; with `includeBody` the decrypted text (and an audit row for the read). */
export async function listAdminSmsRecords(
  em: Db,
  f: SmsRecordFilter,
  opts: { includeBody: boolean; cipher: PiiCipher; who: AuditActor },
): Promise<{ items: AdminSmsRecord[]; total: number }> {
  const { rows, total } = await adminRecordPage(em, f);
  const items = opts.includeBody ? await readBodies(em, opts.who, rows, opts.cipher) : rows.map((r) => toRecord(r, opts.cipher, false));
  return { items, total };
}

export async function getAdminSmsRecord(
  em: Db,
  recordId: number,
  opts: { includeBody: boolean; cipher: PiiCipher; who: AuditActor },
): Promise<AdminSmsRecord> {
  const row = await adminRecordRow(em, recordId);
  if (!row) throw new AppError('SMS_RECORD_NOT_FOUND');
  return opts.includeBody ? (await readBodies(em, opts.who, [row], opts.cipher))[0]! : toRecord(row, opts.cipher, false);
}
