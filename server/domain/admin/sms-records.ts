import { AppError } from '../../../contract/common/errors.ts';
import { smsResolutions, smsReviewStatuses } from '../../../contract/admin/sms-records.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { recordAudit, type AuditActor } from '../audit/service.ts';
import { pgDate, pgDateOrNull } from '../../infra/database/pg-date.ts';
import { trimDecimal } from '../payments/view.ts';
import type { SmsRecordStatus } from '../sms-intake/entities.ts';
import { decryptSmsBody, decryptSmsSender, SMS_RECORD_CONTEXT, smsRowBinding } from '../sms-intake/record-cipher.ts';
import type { ChainState } from '../sms/matcher.ts';
import { scopeParam } from '../brands/scope.ts';

export interface AdminSmsRecord {
  id: number;
  brand_id: number;
  mode: 'live' | 'test';
  device_id: number;
  device_message_id: string;
  sender: string;
  received_at: string;
  server_received_at: string;
  sim_slot: number | null;
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
  direction: 'in' | 'out' | null;
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
  body?: string;
}

type Row = Record<string, any>;

const SELECT = `
  SELECT r.id, r.brand_id, r.mode, r.device_id, r.device_message_id, r.sender, r.received_at, r.server_received_at, r.sim_slot, r.match_status,
         r.duplicate_of_id, g.code AS gateway, r.parsed_amount::text AS parsed_amount, r.parsed_trx_id, r.transaction_id, t.trx_id,
         r.confidence::text AS confidence, r.candidate_ids::text[] AS candidate_ids, r.reason, r.matched_at,
         r.reason_code, r.suggestions, r.direction, r.kind, r.parsed_balance::text AS parsed_balance, r.parsed_fee::text AS parsed_fee,
         r.parsed_sender_number, r.sms_time, r.chain_state, r.chain_previous_id, r.chain_expected_balance::text AS chain_expected_balance,
         r.resolution, r.resolved_by, r.resolved_at, r.resolution_note, r.created_at, r.body_encrypted
    FROM sms_records r LEFT JOIN gateways g ON g.id = r.gateway_id LEFT JOIN transactions t ON t.id = r.transaction_id`;

/** Only the last three digits of the payer number: enough to compare with a customer's, without listing personal data. */
function maskNumber(n: string): string {
  return n.replace(/\d(?=(?:\D*\d){3})/g, '*');
}

/**
 * The sender is decrypted for every record (lists show it, as they did when it
 * was stored in clear); the body only on request. A value that fails
 * authentication (copied from another record, or tampered) fails the read
 * rather than showing something that is not this record's.
 */
function toRecord(r: Row, cipher: PiiCipher, withBody: boolean): AdminSmsRecord {
  const binding = smsRowBinding(r as { brand_id: string; device_id: string; device_message_id: string });
  const out: AdminSmsRecord = {
    id: Number(r.id),
    brand_id: Number(r.brand_id),
    mode: r.mode,
    device_id: Number(r.device_id),
    device_message_id: r.device_message_id,
    sender: decryptSmsSender(cipher, r.sender, binding),
    received_at: pgDate(r.received_at).toISOString(),
    server_received_at: pgDate(r.server_received_at).toISOString(),
    sim_slot: r.sim_slot,
    match_status: r.match_status,
    duplicate_of: r.duplicate_of_id === null ? null : Number(r.duplicate_of_id),
    gateway: r.gateway,
    parsed_amount: r.parsed_amount,
    parsed_trx_id: r.parsed_trx_id,
    transaction_id: r.transaction_id === null ? null : Number(r.transaction_id),
    trx_id: r.trx_id,
    confidence: trimDecimal(r.confidence),
    candidate_ids: ((r.candidate_ids as string[] | null) ?? []).map(Number),
    reason: r.reason,
    reason_code: r.reason_code,
    suggestions: (r.suggestions as AdminSmsRecord['suggestions'] | null) ?? [],
    direction: r.direction,
    kind: r.kind,
    parsed_balance: r.parsed_balance,
    parsed_fee: r.parsed_fee,
    parsed_sender_number: r.parsed_sender_number === null ? null : maskNumber(cipher.decrypt(r.parsed_sender_number, SMS_RECORD_CONTEXT.senderNumber, binding)),
    sms_time: pgDateOrNull(r.sms_time)?.toISOString() ?? null,
    balance_chain: { state: r.chain_state, previous_id: r.chain_previous_id === null ? null : Number(r.chain_previous_id), expected_balance: r.chain_expected_balance },
    matched_at: pgDateOrNull(r.matched_at)?.toISOString() ?? null,
    resolution: r.resolution,
    resolved_by: r.resolved_by,
    resolved_at: pgDateOrNull(r.resolved_at)?.toISOString() ?? null,
    resolution_note: r.resolution_note,
    created_at: pgDate(r.created_at).toISOString(),
  };
  if (withBody) out.body = decryptSmsBody(cipher, r.body_encrypted, binding);
  return out;
}

/**
 * Decrypting SMS text is an admin reading personal data, so it happens only on
 * request and leaves a trace: one audit row per read naming the record ids
 * (never the text), written in the same transaction as the read.
 */
async function readBodies(em: EntityManager, who: AuditActor, rows: Row[], cipher: PiiCipher): Promise<AdminSmsRecord[]> {
  if (rows.length === 0) return [];
  return em.transactional(async (tx) => {
    const ids = rows.map((r) => Number(r.id));
    await recordAudit(tx, who, {
      action: 'sms_record.read_body',
      targetType: 'sms_record',
      targetId: ids.length === 1 ? ids[0]! : null,
      brandId: new Set(rows.map((r) => r.brand_id)).size === 1 ? Number(rows[0].brand_id) : null,
      after: { sms_record_ids: ids },
    });
    return rows.map((r) => toRecord(r, cipher, true));
  });
}

export interface SmsRecordFilter {
  page: number;
  perPage: number;
  brandId?: number;
  /** A console operator's brands; absent or null: every brand. */
  brandIds?: number[] | null;
  mode?: 'live' | 'test';
  matchStatus?: SmsRecordStatus;
  deviceId?: number;
  /** true: only records waiting for a person (the SMS half of the review queue); false: only the others. */
  needsReview?: boolean;
  /** Inclusive UTC dates of the server's receipt, `YYYY-MM-DD`. */
  from?: string;
  to?: string;
}

/** Newest first; with `includeBody` the decrypted text (and an audit row for the read). */
export async function listAdminSmsRecords(
  em: EntityManager,
  f: SmsRecordFilter,
  opts: { includeBody: boolean; cipher: PiiCipher; who: AuditActor },
): Promise<{ items: AdminSmsRecord[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    where.push(sql);
    params.push(value);
  };
  if (f.brandId !== undefined) add('r.brand_id = ?', f.brandId);
  if (f.brandIds) add('r.brand_id IN (?)', scopeParam(f.brandIds));
  if (f.mode) add('r.mode = ?', f.mode);
  if (f.matchStatus) add('r.match_status = ?', f.matchStatus);
  if (f.deviceId !== undefined) add('r.device_id = ?', f.deviceId);
  if (f.needsReview !== undefined) {
    add(`${f.needsReview ? '' : 'NOT '}(r.match_status = ANY(ARRAY[?]::text[]) AND r.resolved_at IS NULL)`, [...smsReviewStatuses]);
  }
  if (f.from) add("r.server_received_at >= (?::date)::timestamp AT TIME ZONE 'UTC'", f.from);
  if (f.to) add("r.server_received_at < ((?::date + 1)::timestamp AT TIME ZONE 'UTC')", f.to);
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const [count] = await em.execute<Array<{ n: string }>>(`SELECT count(*) AS n FROM sms_records r ${clause}`, params);
  const rows = await em.execute<Row[]>(`${SELECT} ${clause} ORDER BY r.server_received_at DESC, r.id DESC LIMIT ? OFFSET ?`, [
    ...params,
    f.perPage,
    (f.page - 1) * f.perPage,
  ]);
  const items = opts.includeBody ? await readBodies(em, opts.who, rows, opts.cipher) : rows.map((r) => toRecord(r, opts.cipher, false));
  return { items, total: Number(count!.n) };
}

export async function getAdminSmsRecord(
  em: EntityManager,
  recordId: number,
  opts: { includeBody: boolean; cipher: PiiCipher; who: AuditActor },
): Promise<AdminSmsRecord> {
  const rows = await em.execute<Row[]>(`${SELECT} WHERE r.id = ?`, [recordId]);
  if (!rows[0]) throw new AppError('SMS_RECORD_NOT_FOUND');
  return opts.includeBody ? (await readBodies(em, opts.who, rows, opts.cipher))[0]! : toRecord(rows[0], opts.cipher, false);
}
