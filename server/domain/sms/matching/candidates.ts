import type { Mode } from '../../../../contract/vocabulary.ts';
import type { TransactionStatus } from '../../payments/entities.ts';
import { toTransaction, type TransactionRecord } from '../../payments/transactions.ts';
import { OPEN_STATUSES, type MatchCandidate } from './matcher.ts';
import type { GatewayParseConfig } from '../templates/parser.ts';
import { sameSender, senderKey } from '../templates/senders.ts';
import { type Db } from '../../db.ts';
import {
  candidatesOf, gatewaySmsRows, lockCandidateIntents, lockCandidateTransactions, type CandidateQuery, type IntentLockRow, type TransactionLockRow,
} from './queries/candidates.ts';

export type { CandidateQuery };
import type { StoredCustomerPhone } from './expected-payer.ts';
import type { GatewaySmsRow } from './queries/records.ts';

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
export async function loadGatewaySmsConfigs(em: Db): Promise<GatewaySmsConfig[]> {
  return (await gatewaySmsRows(em)).map(toGatewaySmsConfig);
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
export async function loadCandidates(tx: Db, q: CandidateQuery): Promise<CandidateRow[]> {
  return (await candidatesOf(tx, [q])).map(({ n: _n, claims: _claims, ...r }) => candidateRowOf(r));
}

/** A candidate as candidatesOf reads it: the columns of `transactions`. */
export function candidateRowOf(r: {
  id: number; brand_id: number; mode: Mode; intent_id: number; gateway_id: number; sms_amount: string; gateway_trx_id: string | null;
  created_at: Date; status: TransactionStatus; sender_number_encrypted: string | null; trx_id: string;
  account?: { number: string; device_id: number | string | null; sim_slot: number | null } | null;
}): CandidateRow {
  return {
    id: r.id,
    brandId: r.brand_id,
    mode: r.mode,
    intentId: r.intent_id,
    gatewayId: r.gateway_id,
    amount: r.sms_amount,
    gatewayTrxId: r.gateway_trx_id,
    createdAt: r.created_at,
    status: r.status,
    payerNumberEncrypted: r.sender_number_encrypted,
    trxId: r.trx_id,
    account: r.account ? { number: r.account.number, deviceId: r.account.device_id === null ? null : Number(r.account.device_id), simSlot: r.account.sim_slot } : null,
  };
}

/** A candidate as locked, with the whole transaction as read under its locks. */
export interface LockedCandidate extends CandidateRow {
  record: TransactionRecord;
  /** The payment's customer phone as stored (a PII token with its binding), read with the lock; null without one. */
  customerPhone: StoredCustomerPhone | null;
}

/**
 * The locked candidates of the two lock statements' answers. A transaction
 * whose intent is not among `intents` is left out: its intent's lock was not
 * held when the transaction's was taken.
 */
function lockedCandidatesOf(intents: readonly IntentLockRow[], rows: readonly TransactionLockRow[]): Map<number, LockedCandidate> {
  const intentCreatedAt = new Map(intents.map((i) => [Number(i.intent_id), i.created_at]));
  const fresh = new Map<number, LockedCandidate>();
  for (const r of rows) {
    const record = toTransaction(r);
    const createdAt = intentCreatedAt.get(record.intentId);
    if (createdAt === undefined) continue;
    fresh.set(record.id, {
      id: record.id,
      brandId: record.brandId,
      mode: record.mode,
      intentId: record.intentId,
      gatewayId: record.gatewayId,
      amount: record.smsAmount,
      gatewayTrxId: record.gatewayTrxId,
      createdAt,
      status: record.status,
      payerNumberEncrypted: r.payer_number_encrypted,
      trxId: record.trxId,
      record,
      customerPhone:
        r.customer_phone_encrypted !== null && r.customer_brand_id !== null && r.customer_uuid !== null
          ? { brandId: r.customer_brand_id, uuid: r.customer_uuid, token: r.customer_phone_encrypted }
          : null,
    });
  }
  return fresh;
}

/**
 * Locks the open ones among `rows` (their intents first, then the
 * transactions, each in id order: the order completeTransaction uses) and
 * returns them as they are now. Rows that were open when loaded but changed
 * meanwhile come back with their new status and claim. Each comes with its
 * whole TransactionRecord, read under the locks, so that completing it
 * (completeLockedTransactions) need not lock and read it again.
 */
export async function lockOpenCandidates(tx: Db, rows: readonly CandidateRow[]): Promise<Map<number, LockedCandidate>> {
  const open = rows.filter((r) => OPEN_STATUSES.includes(r.status));
  if (open.length === 0) return new Map();
  const intentIds = [...new Set(open.map((r) => r.intentId))].sort((a, b) => a - b);
  // The intents' locks first, as ever.
  const intents = await lockCandidateIntents(tx, intentIds);
  return lockedCandidatesOf(intents, await lockCandidateTransactions(tx, open.map((r) => r.id)));
}
