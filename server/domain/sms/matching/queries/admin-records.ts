import { sql } from 'kysely';
import { smsReviewStatuses, type Mode } from '../../../../../contract/vocabulary.ts';
import { utcDayAfter, utcDayStart, type Db } from '../../../db.ts';
import { scopeParam } from '../../../brands/scope.ts';
import type { SmsRecordStatus } from '../../intake/entities.ts';

/** The SMS records as the admin API and the console read them (admin-records.ts). */

function fromRecords(em: Db) {
  return em
    .selectFrom('sms_records as r')
    .leftJoin('gateways as g', 'g.id', 'r.gateway_id')
    .leftJoin('transactions as t', 't.id', 'r.transaction_id');
}

// Not `g.code as gateway`: db.ts would convert it as the record's `gateway` relation (a number).
const COLUMNS = [
  'r.id', 'r.brand_id', 'r.mode', 'r.device_id', 'r.device_message_id', 'r.sender', 'r.received_at', 'r.server_received_at', 'r.sim_slot', 'r.receiving_number', 'r.match_status',
  'r.duplicate_of_id', 'g.code as gateway_code', 'r.parsed_amount', 'r.parsed_trx_id', 'r.transaction_id', 't.trx_id',
  'r.confidence', 'r.candidate_ids', 'r.reason', 'r.matched_at',
  'r.reason_code', 'r.suggestions', 'r.direction', 'r.kind', 'r.parsed_balance', 'r.parsed_fee',
  'r.parsed_sender_number', 'r.sms_time', 'r.chain_state', 'r.chain_previous_id', 'r.chain_expected_balance',
  'r.resolution', 'r.resolved_by', 'r.resolved_at', 'r.resolution_note', 'r.created_at', 'r.body_encrypted', 'r.text_expired_at',
] as const;

const selectRecords = (em: Db) => fromRecords(em).select(COLUMNS);
export type AdminRecordRow = Awaited<ReturnType<ReturnType<typeof selectRecords>['executeTakeFirstOrThrow']>>;

export interface SmsRecordFilter {
  page: number;
  perPage: number;
  brandId?: number;
  /** A console operator's brands; absent or null: every brand. */
  brandIds?: number[] | null;
  mode?: Mode;
  matchStatus?: SmsRecordStatus;
  deviceId?: number;
  /** true: only records waiting for a person (the SMS half of the review queue); false: only the others. */
  needsReview?: boolean;
  /** Inclusive UTC dates of the server's receipt, `YYYY-MM-DD`. */
  from?: string;
  to?: string;
}

/** A page of records, newest first, and how many match in all. */
export async function adminRecordPage(em: Db, f: SmsRecordFilter): Promise<{ rows: AdminRecordRow[]; total: number }> {
  let q = fromRecords(em);
  if (f.brandId !== undefined) q = q.where('r.brand_id', '=', f.brandId);
  if (f.brandIds) q = q.where('r.brand_id', 'in', scopeParam(f.brandIds));
  if (f.mode) q = q.where('r.mode', '=', f.mode);
  if (f.matchStatus) q = q.where('r.match_status', '=', f.matchStatus);
  if (f.deviceId !== undefined) q = q.where('r.device_id', '=', f.deviceId);
  if (f.needsReview !== undefined) {
    const waiting = sql<boolean>`(r.match_status = ANY(${[...smsReviewStatuses]}::text[]) AND r.resolved_at IS NULL)`;
    q = q.where(f.needsReview ? waiting : sql<boolean>`NOT ${waiting}`);
  }
  // Whole UTC days, computed by the database from the date text as before.
  if (f.from) q = q.where('r.server_received_at', '>=', utcDayStart(f.from));
  if (f.to) q = q.where('r.server_received_at', '<', utcDayAfter(f.to));
  const { n } = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select(COLUMNS)
    .orderBy('r.server_received_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(f.perPage)
    .offset((f.page - 1) * f.perPage)
    .execute();
  return { rows, total: Number(n) };
}

export async function adminRecordRow(em: Db, recordId: number): Promise<AdminRecordRow | undefined> {
  return selectRecords(em).where('r.id', '=', recordId).executeTakeFirst();
}
