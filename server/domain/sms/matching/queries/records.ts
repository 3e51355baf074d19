import { smsReviewStatuses, type Mode } from '../../../../../contract/vocabulary.ts';
import { scopeParam } from '../../../brands/scope.ts';
import type { PiiBinding, PiiCipher } from '../../../../infra/crypto/pii-cipher.ts';
import { SMS_RECORD_CONTEXT, decryptSmsSender, smsRecordBinding, smsRowBinding, textKept } from '../../intake/record-cipher.ts';
import { smsTimeSql } from '../../intake/sms-time.ts';
import type { StoredSmsTemplate } from '../../../gateways/entities.ts';
import { sql } from 'kysely';
import { prepared, rawStatement, type Db } from '../../../db.ts';
import type { ChainState, MatchResult, MatchStatus, ReasonCode } from '../matcher.ts';
import type { ParsedSms } from '../../templates/parser.ts';

/** The SMS time of `r` (an sms_records row) joined with its device `d`: see PendingSmsRecord.smsTime. */
export const SMS_TIME_SQL = smsTimeSql('r', 'd.clock_offset_ms');

/**
 * The same as a Kysely expression, for queries over `sms_records as r` joined
 * with `devices as d`. Raw: `make_interval`'s named argument has no builder
 * form. Select it `.as('sms_time')`: the builder converts a value by the
 * column it is named after, so that name brings it back as a Date.
 */
export const smsTimeOf = sql<Date>`${sql.raw(SMS_TIME_SQL)}`;

/** Cipher contexts of the encrypted columns of `sms_records` (see sms/intake/record-cipher.ts). */
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
  /** The SIM slot the phone says it arrived on, and that SIM's number, when it knows them. */
  simSlot: number | null;
  receivingNumber: string | null;
  /** The slots of its phone that a wallet account names, by gateway: a chain on such a slot is the account's own. */
  pinnedSlots: ReadonlyArray<{ gatewayId: number; simSlot: number }>;
}

/** A gateway with official SMS senders, as claimPendingRecords reads it (candidates.ts maps it). */
export interface GatewaySmsRow {
  id: string | number;
  code: string;
  sms_senders: string[];
  sms_templates: StoredSmsTemplate[];
  review_above?: string | null;
}

export type ClaimedSmsRecord = PendingSmsRecord & { gateways: GatewaySmsRow[]; settings: Map<string, unknown> };

/**
 * claimPendingRecords' statement, compiled once per shape (db.ts `prepared`): one
 * record by its id, or several by an id array.
 */
const claimStatement = (many: boolean) =>
  prepared((k, $: { id: number; ids: number[]; settingKeys: string[] }) =>
    k
      .selectFrom('sms_records as r')
      .innerJoin('devices as d', 'd.id', 'r.device_id')
      .select(['r.id', 'r.brand_id', 'r.mode', 'r.device_id', 'r.device_message_id', 'r.sender', 'r.body_encrypted', 'r.sim_slot', 'r.receiving_number', smsTimeOf.as('sms_time')])
      // Raw: aggregated as JSON rows; the phone's slots that its brand's wallet accounts name.
      .select(
        sql<Array<{ gateway_id: number; sim_slot: number }>>`(SELECT COALESCE(json_agg(json_build_object('gateway_id', a.gateway_id, 'sim_slot', a.sim_slot)), '[]'::json)
         FROM wallet_accounts a WHERE a.device_id = r.device_id AND a.sim_slot IS NOT NULL)`.as('pinned_slots'),
      )
      // Raw: `settings` has no entity, and the gateways are aggregated as the JSON rows GatewaySmsRow describes.
      .select(
        sql<GatewaySmsRow[]>`(SELECT COALESCE(json_agg(g ORDER BY g.sort_order, g.id), '[]'::json)
         FROM (SELECT id, code, sms_senders, sms_templates, review_above::text AS review_above, sort_order FROM gateways WHERE cardinality(sms_senders) > 0) g)`.as('gateways'),
      )
      .select(sql<Record<string, unknown>>`(SELECT COALESCE(json_object_agg(s.key, s.value), '{}'::json) FROM settings s WHERE s.key = ANY(${$.settingKeys}::text[]))`.as('settings'))
      .where((eb) => (many ? eb('r.id', '=', eb.fn.any(eb.val($.ids))) : eb('r.id', '=', $.id)))
      .where('r.match_status', '=', 'pending')
      // Retention never expires a pending record's text; this keeps it so if it ever did.
      .where('r.text_expired_at', 'is', null)
      .orderBy('r.id')
      .forNoKeyUpdate('r'),
  );
const claimOne = claimStatement(false);
const claimMany = claimStatement(true);

/**
 * Takes the `pending` ones among `ids` for matching, locked in id order, in one
 * statement; those not pending (any more: a concurrent matcher of the same
 * record is waited for, then sees it decided) are left out. NO KEY UPDATE, not
 * UPDATE: a duplicate being inserted holds a KEY SHARE lock on this row (its
 * duplicate_of_id foreign key), which must not delay, let alone skip, the
 * original's matching.
 *
 * The same statement reads what deciding them needs besides the records, once:
 * every gateway with official SMS senders (as loadGatewaySmsConfigs reads them)
 * and the stored values of `settingKeys`, in the records' own transaction.
 */
export async function claimPendingRecords(
  tx: Db,
  ids: readonly number[],
  settingKeys: readonly string[],
  cipher: PiiCipher,
): Promise<ClaimedSmsRecord[]> {
  if (ids.length === 0) return [];
  const rows = await (ids.length === 1 ? claimOne : claimMany).execute(tx, { id: ids[0]!, ids: [...ids], settingKeys: [...settingKeys] });
  return rows.map((row) => {
    const binding = smsRowBinding(row);
    return {
      id: row.id,
      brandId: row.brand_id,
      deviceId: row.device_id,
      mode: row.mode,
      sender: decryptSmsSender(cipher, textKept(row.sender), binding),
      bodyEncrypted: textKept(row.body_encrypted),
      binding,
      smsTime: row.sms_time,
      simSlot: row.sim_slot,
      receivingNumber: row.receiving_number,
      pinnedSlots: row.pinned_slots.map((p) => ({ gatewayId: Number(p.gateway_id), simSlot: p.sim_slot })),
      gateways: row.gateways,
      settings: new Map(Object.entries(row.settings)),
    };
  });
}

/** What matching decided about one record: stored on it, so an admin can see why. */
export interface SmsOutcome extends MatchResult {
  gatewayId: number | null;
  parsed: Pick<ParsedSms, 'direction' | 'kind' | 'amount' | 'trxId' | 'senderNumber' | 'balance' | 'fee' | 'statedAt'> | null;
  chain: { wallet: string; smsTime: Date; state: ChainState; previousId: number | null; expected: string | null; balance: string | null } | null;
}

/** The columns an outcome writes onto its record (storeOutcomes). */
function outcomeColumns(cipher: PiiCipher, rec: { id: number; binding: PiiBinding }, o: SmsOutcome) {
  return {
    match_status: o.status,
    gateway_id: o.gatewayId,
    parsed_amount: o.parsed?.amount ?? null,
    parsed_trx_id: o.parsed?.trxId ?? null,
    parsed_sender_number: o.parsed?.senderNumber ? cipher.encrypt(o.parsed.senderNumber, SMS_SENDER_NUMBER_CONTEXT, rec.binding) : null,
    direction: o.parsed?.direction ?? null,
    kind: o.parsed?.kind?.slice(0, 40) ?? null,
    parsed_balance: o.parsed?.balance ?? null,
    parsed_fee: o.parsed?.fee ?? null,
    stated_at: o.parsed?.statedAt ?? null,
    wallet_key: o.chain?.wallet ?? null,
    sms_time: o.chain?.smsTime ?? null,
    chain_state: o.chain?.state ?? null,
    chain_previous_id: o.chain?.previousId ?? null,
    chain_expected_balance: o.chain?.expected ?? null,
    chain_balance: o.chain?.balance ?? null,
    transaction_id: o.transactionId,
    confidence: o.confidence.toFixed(4),
    candidate_ids: o.candidateIds,
    reason: o.reason,
    reason_code: o.reasonCode,
    suggestions: o.suggestions.map((x) => ({ transaction_id: x.transactionId, why: x.why, distance: x.distance })),
  };
}

/**
 * storeOutcomes' UPDATE, which fails unless it updated every record given ($2 of
 * them). Raw SQL: the typed builder cannot declare json_to_recordset's
 * column definition list (the batch's outcomes as a table).
 */
const updateOutcomes = rawStatement<{ ok: boolean }>(
  `WITH u AS (UPDATE sms_records r
        SET match_status = v.match_status, gateway_id = v.gateway_id, parsed_amount = v.parsed_amount, parsed_trx_id = v.parsed_trx_id,
            parsed_sender_number = v.parsed_sender_number, direction = v.direction, kind = v.kind, parsed_balance = v.parsed_balance,
            parsed_fee = v.parsed_fee, stated_at = v.stated_at, wallet_key = v.wallet_key, sms_time = v.sms_time, chain_state = v.chain_state,
            chain_previous_id = v.chain_previous_id, chain_expected_balance = v.chain_expected_balance, chain_balance = v.chain_balance,
            transaction_id = v.transaction_id,
            confidence = v.confidence, candidate_ids = v.candidate_ids, reason = v.reason, reason_code = v.reason_code,
            suggestions = v.suggestions, matched_at = CASE WHEN v.match_status = 'matched' THEN now() END, updated_at = now()
       FROM json_to_recordset($1::json) AS v(id bigint, match_status text, gateway_id bigint, parsed_amount numeric, parsed_trx_id text,
            parsed_sender_number text, direction text, kind text, parsed_balance numeric, parsed_fee numeric, stated_at timestamptz, wallet_key text,
            sms_time timestamptz, chain_state text, chain_previous_id bigint, chain_expected_balance numeric, chain_balance numeric, transaction_id bigint,
            confidence numeric, candidate_ids bigint[], reason text, reason_code text, suggestions jsonb)
      WHERE r.id = v.id AND r.match_status = 'pending'
      RETURNING r.id)
   SELECT check_invariant((SELECT count(*) FROM u) = $2::int,
          'SMS records ' || $3::text || ': ' || ($2::int - (SELECT count(*) FROM u)) || ' no longer pending when their outcomes were stored') AS ok`,
);

/**
 * Writes each outcome onto its record, still `pending` (the caller holds their
 * locks), in one statement: a batch's outcomes, or one record's.
 */
export async function storeOutcomes(tx: Db, cipher: PiiCipher, items: ReadonlyArray<{ rec: { id: number; binding: PiiBinding }; outcome: SmsOutcome }>): Promise<void> {
  if (items.length === 0) return;
  // sms_time, a Date, goes into the JSON as its ISO text (Date.prototype.toJSON).
  const values = items.map(({ rec, outcome }) => ({ id: rec.id, ...outcomeColumns(cipher, rec, outcome) }));
  // The caller locked every row while pending, so the statement's check fails only if that invariant is
  // broken; failing rolls the whole batch back.
  await updateOutcomes(tx, [JSON.stringify(values), items.length, items.map((i) => i.rec.id).join(', ')]);
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
  resolution: string | null;
  statedAt: Date | null;
  /** The phone and SIM it arrived on (matcher.ts SmsArrival). */
  arrival: { deviceId: number; simSlot: number | null; receivingNumber: string | null };
}

/**
 * The brand's parsed records of one mode (their devices') carrying `trxId` on
 * the given gateways, any status, locked in id order (after the caller's
 * transaction locks).
 */
export async function lockEvidenceByTrxId(tx: Db, brandId: number, mode: Mode, gatewayIds: readonly number[], trxId: string): Promise<StoredEvidenceRow[]> {
  const rows = await tx
    .selectFrom('sms_records as r')
    .innerJoin('devices as d', 'd.id', 'r.device_id')
    .select(['r.id', 'r.parsed_amount', 'r.parsed_trx_id', 'r.parsed_sender_number', 'r.device_id', 'r.device_message_id', 'r.chain_state', 'r.match_status', 'r.candidate_ids', 'r.resolved_at', 'r.resolution', 'r.stated_at', 'r.sim_slot', 'r.receiving_number'])
    .select(sql<Date>`COALESCE(r.sms_time, ${smsTimeOf})`.as('sms_time'))
    .where('r.brand_id', '=', brandId)
    .where('r.mode', '=', mode)
    .where('r.parsed_trx_id', '=', sql<string>`upper(${trxId.trim()})`)
    .where('r.gateway_id', '=', (eb) => eb.fn.any(eb.val([...gatewayIds])))
    .orderBy('r.id')
    .forNoKeyUpdate('r')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    // Selected where parsed_trx_id matches, so both are set (the columns are nullable for other records).
    amount: r.parsed_amount!,
    trxId: r.parsed_trx_id!,
    smsTime: r.sms_time,
    senderNumberEncrypted: r.parsed_sender_number,
    binding: smsRecordBinding({ brandId, deviceId: r.device_id, deviceMessageId: r.device_message_id }),
    chainState: r.chain_state,
    matchStatus: r.match_status as MatchStatus,
    candidateIds: r.candidate_ids ?? [],
    resolvedAt: r.resolved_at,
    resolution: r.resolution,
    statedAt: r.stated_at,
    arrival: { deviceId: r.device_id, simSlot: r.sim_slot, receivingNumber: r.receiving_number },
  }));
}

/** Up to `limit` ids of records still `pending` after `afterId` (id order) that arrived at least `minAgeSeconds` ago. */
export async function pendingRecordIds(db: Db, q: { afterId: number; minAgeSeconds: number; limit: number }): Promise<number[]> {
  const rows = await db
    .selectFrom('sms_records')
    .select('id')
    .where('match_status', '=', 'pending')
    .where('id', '>', q.afterId)
    .where('server_received_at', '<=', sql<Date>`now() - make_interval(secs => ${q.minAgeSeconds})`)
    .orderBy('id')
    .limit(q.limit)
    .execute();
  return rows.map((r) => r.id);
}

/** The record, matched to `transactionId` when the customer's submission proved it, if it still waits (no_candidate, low_confidence). */
export async function markMatchedBySubmission(tx: Db, smsId: number, transactionId: number, q: { confidence: string; reason: string }): Promise<void> {
  await tx
    .updateTable('sms_records')
    .set({
      match_status: 'matched',
      transaction_id: transactionId,
      confidence: q.confidence,
      candidate_ids: [transactionId],
      reason: q.reason,
      reason_code: 'certain_match',
      suggestions: [],
      matched_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', smsId)
    .where('match_status', 'in', ['no_candidate', 'low_confidence'])
    .execute();
}

/** The records that still wait (no_candidate, low_confidence) go to review with the reason, `transactionId` added to their candidates. */
export async function sendToReviewWith(
  tx: Db,
  smsIds: readonly number[],
  transactionId: number,
  q: { status: 'low_confidence' | 'balance_mismatch'; reason: string; reasonCode: ReasonCode },
): Promise<void> {
  await tx
    .updateTable('sms_records')
    .set({
      match_status: q.status,
      confidence: '0',
      reason: q.reason,
      reason_code: q.reasonCode,
      updated_at: sql<Date>`now()`,
      // Raw: adding the transaction to the list unless it is already there is one array expression.
      candidate_ids: sql<number[]>`CASE WHEN ${transactionId}::bigint = ANY(COALESCE(candidate_ids, '{}')) THEN candidate_ids ELSE array_append(COALESCE(candidate_ids, '{}'), ${transactionId}::bigint) END`,
    })
    .where('id', '=', (eb) => eb.fn.any(eb.val([...smsIds])))
    .where('match_status', 'in', ['no_candidate', 'low_confidence'])
    .execute();
}

/** Marks a record waiting for review (and not resolved) dismissed, within `brandIds` when given; undefined when none was. */
export async function markDismissed(db: Db, q: { id: number; actor: string; reason: string; brandIds: readonly number[] | null }) {
  return db
    .updateTable('sms_records')
    .set({ resolution: 'dismissed', resolved_by: q.actor, resolved_at: new Date(), resolution_note: q.reason, updated_at: new Date() })
    .where('id', '=', q.id)
    .where('match_status', 'in', [...smsReviewStatuses])
    .where('resolved_at', 'is', null)
    .$if(q.brandIds !== null, (b) => b.where('brand_id', 'in', scopeParam(q.brandIds!)))
    .returning(['id', 'brand_id', 'match_status'])
    .executeTakeFirst();
}

/** A record's status and resolution, within `brandIds` when given. */
export async function recordState(db: Db, q: { id: number; brandIds: readonly number[] | null }) {
  return db
    .selectFrom('sms_records')
    .select(['match_status', 'resolution'])
    .where('id', '=', q.id)
    .$if(q.brandIds !== null, (b) => b.where('brand_id', 'in', scopeParam(q.brandIds!)))
    .executeTakeFirst();
}

/** The id of the record that proved (matched) the transaction, if one did. */
export async function recordThatProved(db: Db, transactionId: number): Promise<number | undefined> {
  const row = await db.selectFrom('sms_records').select('id').where('transaction_id', '=', transactionId).where('match_status', '=', 'matched').executeTakeFirst();
  return row?.id;
}

/** A record of the brand as a person's verification reads it; `lock` holds it (NO KEY UPDATE) to the end of the transaction. */
export async function evidenceRecord(db: Db, q: { id: number; brandId: number; lock: boolean }) {
  const sel = db
    .selectFrom('sms_records')
    .select(['id', 'brand_id', 'mode', 'gateway_id', 'parsed_amount', 'parsed_trx_id', 'match_status'])
    .where('id', '=', q.id)
    .where('brand_id', '=', q.brandId);
  return (q.lock ? sel.forNoKeyUpdate() : sel).executeTakeFirst();
}

/** A record waiting for review, matched to the transaction by a person's verification. */
export async function markVerified(tx: Db, id: number, q: { transactionId: number; actor: string; note: string | null }): Promise<void> {
  await tx
    .updateTable('sms_records')
    .set({
      match_status: 'matched',
      transaction_id: q.transactionId,
      matched_at: sql<Date>`now()`,
      resolution: 'verified',
      resolved_by: q.actor,
      resolved_at: sql<Date>`now()`,
      resolution_note: q.note,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .where('match_status', 'in', [...smsReviewStatuses])
    .execute();
}

/** The brand's unresolved records waiting for review whose only candidate is the transaction, resolved `rejected`; their ids. */
export async function markRejectedWith(tx: Db, q: { brandId: number; transactionId: number; actor: string; reason: string }): Promise<number[]> {
  const rows = await tx
    .updateTable('sms_records')
    .set({ resolution: 'rejected', resolved_by: q.actor, resolved_at: sql<Date>`now()`, resolution_note: q.reason, updated_at: sql<Date>`now()` })
    .where('brand_id', '=', q.brandId)
    .where('match_status', 'in', [...smsReviewStatuses])
    .where('resolved_at', 'is', null)
    .where(sql<number>`cardinality(candidate_ids)`, '>', 0)
    // Raw: array containment (`<@`) has no builder operator.
    .where(sql<boolean>`candidate_ids <@ ${[q.transactionId]}::bigint[]`)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
