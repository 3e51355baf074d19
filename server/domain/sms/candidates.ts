import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { StoredSmsTemplate } from '../gateways/entities.ts';
import { pgDate } from '../../infra/database/pg-date.ts';
import { toTransactionRecord, TRANSACTION_COLUMNS, TRANSACTION_FROM, type TransactionRecord, type TransactionRow } from '../payments/transactions.ts';
import { OPEN_STATUSES, type MatchCandidate } from './matcher.ts';
import type { GatewayParseConfig } from './parser.ts';
import { sameSender, senderKey } from './senders.ts';
import { pgIdArray } from '../../infra/database/pg-array.ts';
import type { GatewaySmsRow } from './records.ts';

export interface GatewaySmsConfig extends GatewayParseConfig {
  code: string;
  /** Amounts above it always go to review (docs/matching.md, "Large amounts"); null: no threshold. */
  reviewAbove: string | null;
}

/**
 * Every gateway with official SMS senders, in display order. Disabled ones
 * too: a gateway switched off today still has transactions waiting for the
 * SMS that proves them.
 */
export async function loadGatewaySmsConfigs(em: EntityManager): Promise<GatewaySmsConfig[]> {
  const rows = await em.execute<Array<{ id: string; code: string; sms_senders: string[]; sms_templates: StoredSmsTemplate[]; review_above: string | null }>>(
    `SELECT id, code, sms_senders, sms_templates, review_above::text AS review_above FROM gateways WHERE cardinality(sms_senders) > 0 ORDER BY sort_order, id`,
  );
  return rows.map(toGatewaySmsConfig);
}

export function toGatewaySmsConfig(r: GatewaySmsRow): GatewaySmsConfig {
  return { id: Number(r.id), code: r.code, senders: r.sms_senders, templates: r.sms_templates, reviewAbove: r.review_above ?? null };
}

export function isOfficialSender(gateway: Pick<GatewayParseConfig, 'senders'>, sender: string): boolean {
  return gateway.senders.some((x) => sameSender(x, sender));
}

/**
 * The gateway and every other gateway with an official sender in common: an
 * SMS from that sender is evidence for a payment on any of them (gateways are
 * global, so two gateways can front the same wallet).
 */
export function gatewaysSharingSenders(configs: readonly GatewaySmsConfig[], gatewayId: number): number[] {
  const own = configs.find((g) => g.id === gatewayId);
  if (!own) return [gatewayId];
  const senders = new Set(own.senders.map(senderKey).filter((k): k is string => k !== null));
  return configs.filter((g) => g.senders.some((s) => senders.has(senderKey(s) ?? ''))).map((g) => g.id);
}

/**
 * `createdAt` is the creation time of the transaction's PAYMENT (intent), which
 * is what the matcher's timing rule compares with the SMS time. The checkout
 * creates a manual-gateway transaction only when the customer submits the
 * gateway trx id, i.e. after paying, so the SMS normally predates the
 * transaction row itself; what an SMS must not predate is the payment it pays
 * (an older SMS belongs to an earlier payment: replaying it is the attack the
 * rule stops).
 */
export interface CandidateRow extends MatchCandidate {
  // `amount` (from MatchCandidate) is the transaction's sms_amount: what the
  // customer was told to send, amount + fee when the customer pays the fee.
  brandId: number;
  mode: Mode;
  intentId: number;
  gatewayId: number;
  /** PII cipher token of the payer number declared at checkout (context `transaction.sender_number`, bound to brand and `trxId`). */
  payerNumberEncrypted: string | null;
  /** The service's trx id (the payer number's binding). */
  trxId: string;
}

interface Row {
  id: string;
  brand_id: string;
  mode: Mode;
  intent_id: string;
  gateway_id: string;
  amount: string;
  gateway_trx_id: string | null;
  created_at: string | Date;
  status: string;
  sender_number_encrypted: string | null;
  trx_id: string;
}

const COLUMNS = `t.id, t.brand_id, t.mode, t.intent_id, t.gateway_id, t.sms_amount::text AS amount, t.gateway_trx_id, i.created_at, t.status, t.sender_number_encrypted, t.trx_id`;

function toCandidate(r: Row): CandidateRow {
  return {
    id: Number(r.id),
    brandId: Number(r.brand_id),
    mode: r.mode,
    intentId: Number(r.intent_id),
    gatewayId: Number(r.gateway_id),
    amount: r.amount,
    gatewayTrxId: r.gateway_trx_id,
    createdAt: pgDate(r.created_at),
    status: r.status,
    payerNumberEncrypted: r.sender_number_encrypted,
    trxId: r.trx_id,
  };
}

/**
 * docs/matching.md: the brand's open transactions on the gateways whose
 * payment was created within the window before the SMS time, plus every
 * transaction on those gateways claiming the parsed trx id (any status, any
 * brand: the matcher needs them to see duplicates and conflicts). Not locked.
 * Open ones only of the SMS's mode (its device's): a test device's SMS is
 * never evidence for a live payment, nor a live one's for a test payment.
 * Open ones with another amount are left out in the query: the matcher never
 * decides by them, and a busy brand can have thousands in the window.
 */
export async function loadCandidates(
  tx: EntityManager,
  q: { brandId: number; mode: Mode; gatewayIds: readonly number[]; trxId: string; amount: string; smsTime: Date; windowMinutes: number },
): Promise<CandidateRow[]> {
  const rows = await tx.execute<Row[]>(
    `SELECT ${COLUMNS} FROM transactions t JOIN payment_intents i ON i.id = t.intent_id
      WHERE t.gateway_id = ANY(?::bigint[])
        AND ((t.brand_id = ? AND t.mode = ? AND t.status IN (?) AND t.sms_amount = ?::numeric
              AND i.created_at >= ?::timestamptz - make_interval(mins => ?) AND i.created_at <= ?::timestamptz)
             OR (t.gateway_trx_id IS NOT NULL AND upper(t.gateway_trx_id) = upper(?)))
      ORDER BY t.id`,
    [pgIdArray(q.gatewayIds), q.brandId, q.mode, [...OPEN_STATUSES], q.amount, q.smsTime.toISOString(), q.windowMinutes, q.smsTime.toISOString(), q.trxId],
  );
  return rows.map(toCandidate);
}

/** A candidate as locked, with the whole transaction as read under its locks. */
export interface LockedCandidate extends CandidateRow {
  record: TransactionRecord;
}

/**
 * Locks the open ones among `rows` (their intents first, then the
 * transactions, each in id order: the order completeTransaction uses) and
 * returns them as they are now. Rows that were open when loaded but changed
 * meanwhile come back with their new status and claim. Each comes with its
 * whole TransactionRecord, read under the locks, so that completing it
 * (completeLockedTransaction) need not lock and read it again: two round
 * trips per matched SMS (BENCHMARKS.md).
 */
export async function lockOpenCandidates(tx: EntityManager, rows: readonly CandidateRow[]): Promise<Map<number, LockedCandidate>> {
  const open = rows.filter((r) => OPEN_STATUSES.includes(r.status));
  const fresh = new Map<number, LockedCandidate>();
  if (open.length === 0) return fresh;
  const intentIds = [...new Set(open.map((r) => r.intentId))].sort((a, b) => a - b);
  await tx.execute('SELECT id FROM payment_intents WHERE id = ANY(?::bigint[]) ORDER BY id FOR UPDATE', [pgIdArray(intentIds)]);
  const locked = await tx.execute<Array<TransactionRow & { intent_created_at: string | Date; payer_number_encrypted: string | null }>>(
    `SELECT ${TRANSACTION_COLUMNS}, i.created_at AS intent_created_at, t.sender_number_encrypted AS payer_number_encrypted ${TRANSACTION_FROM}
      WHERE t.id = ANY(?::bigint[]) ORDER BY t.id FOR UPDATE OF t`,
    [pgIdArray(open.map((r) => r.id))],
  );
  for (const r of locked) {
    const record = toTransactionRecord(r);
    fresh.set(record.id, {
      id: record.id,
      brandId: record.brandId,
      mode: record.mode,
      intentId: record.intentId,
      gatewayId: record.gatewayId,
      amount: record.smsAmount,
      gatewayTrxId: record.gatewayTrxId,
      createdAt: pgDate(r.intent_created_at),
      status: record.status,
      payerNumberEncrypted: r.payer_number_encrypted,
      trxId: record.trxId,
      record,
    });
  }
  return fresh;
}
