import { withAudit, type AuditActor } from '../audit/service.ts';
import type { SmsRecordStatus } from '../sms/index.ts';
import type { TransactionStatus } from './entities.ts';
import { type Db } from '../db.ts';
import { getTransaction, TRANSACTION_SENDER_CONTEXT, transactionBinding, type TransactionRecord } from './transactions.ts';
import { maskPayerNumber } from '../sms/index.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { trimDecimal } from './view.ts';
import { rejectTransaction, verifyTransactionManually } from '../sms/index.ts';
import { AppError } from '../../../contract/common/errors.ts';
import type { GatewayType, Mode } from '../../../contract/vocabulary.ts';
import { adminTransactionPage, adminTransactionRow, brandIdsInScope, smsOfTransaction, type AdminTransactionRow, type CustomerMatch, type TransactionFilter } from './queries/admin.ts';
import { blindIndex } from '../../infra/crypto/blind-index.ts';
import { normalizeEmail, normalizePhone } from '../customers/normalize.ts';

export interface AdminTransaction {
  id: number;
  trx_id: string;
  payment_id: string;
  brand_id: number;
  mode: Mode;
  gateway: string;
  gateway_type: GatewayType;
  method: string;
  gateway_trx_id: string | null;
  amount: string;
  currency: string;
  fee: string;
  exchange_rate: string | null;
  requested_amount: string;
  requested_currency: string;
  reference: string | null;
  /** The payer number the customer declared at checkout, all but its last three digits masked. */
  sender_number: string | null;
  status: TransactionStatus;
  failure_reason: string | null;
  completion_source: string | null;
  created_at: string;
  completed_at: string | null;
  wallet_account: { id: number; number: string; label: string | null } | null;
}

export interface TransactionSms {
  id: number;
  match_status: SmsRecordStatus;
  role: 'matched' | 'candidate';
  parsed_amount: string | null;
  parsed_trx_id: string | null;
  confidence: string | null;
  received_at: string;
}

/**
 * Masked like an SMS's payer number (admin-records.ts): enough for a person to
 * tell two payments of one amount apart without listing the customer's number.
 */
function declaredPayer(r: AdminTransactionRow, keys: PersonalDataKeys): string | null {
  if (r.sender_number_encrypted === null) return null;
  return maskPayerNumber(keys.pii.decrypt(r.sender_number_encrypted, TRANSACTION_SENDER_CONTEXT, transactionBinding(r.brand_id, r.trx_id)));
}

function toTransaction(r: AdminTransactionRow, keys: PersonalDataKeys): AdminTransaction {
  return {
    id: r.id,
    trx_id: r.trx_id,
    payment_id: r.payment_id,
    brand_id: r.brand_id,
    mode: r.mode,
    gateway: r.gateway_code,
    gateway_type: r.gateway_type,
    method: r.method,
    gateway_trx_id: r.gateway_trx_id,
    amount: r.amount,
    currency: r.currency,
    fee: r.fee,
    exchange_rate: trimDecimal(r.exchange_rate),
    requested_amount: r.requested_amount,
    requested_currency: r.requested_currency,
    reference: r.reference,
    sender_number: declaredPayer(r, keys),
    status: r.status,
    failure_reason: r.failure_reason,
    completion_source: r.completion_source,
    created_at: r.created_at.toISOString(),
    completed_at: r.completed_at?.toISOString() ?? null,
    wallet_account: r.wallet_account_id === null ? null : { id: r.wallet_account_id, number: r.wallet_account_number!, label: r.wallet_account_label },
  };
}

async function getAdminTransaction(em: Db, keys: PersonalDataKeys, transactionId: number): Promise<AdminTransaction> {
  const row = await adminTransactionRow(em, transactionId);
  if (!row) throw new AppError('TRANSACTION_NOT_FOUND');
  return toTransaction(row, keys);
}

export type { TransactionFilter };

/**
 * The customer's keyed hashes, one per brand the caller may see: the blind
 * index is keyed by brand, so a search across brands computes one hash per
 * brand in scope (narrowed by the `brand_id` filter). Normalised exactly as the
 * merchant API's search (payments/list.ts); a value that cannot be normalised
 * could never match and is a 400 on its parameter.
 */
async function customerHashes(em: Db, key: Buffer, f: TransactionFilter, kind: 'email' | 'phone', value: string): Promise<{ brandIds: number[]; hashes: string[] }> {
  const normalised = kind === 'email' ? normalizeEmail(value) : normalizePhone(value);
  if (!normalised) {
    throw new AppError('VALIDATION_ERROR', kind === 'email' ? 'Must be a valid email address' : 'Must be a valid phone number', {
      field: kind === 'email' ? 'customer_email' : 'customer_phone',
    });
  }
  const brandIds = await brandIdsInScope(em, f);
  return { brandIds, hashes: brandIds.map((id) => blindIndex(key, id, kind, normalised)) };
}

/** Every brand's transactions, or one brand's, newest first. */
export async function listAdminTransactions(em: Db, keys: PersonalDataKeys, f: TransactionFilter): Promise<{ items: AdminTransaction[]; total: number }> {
  const customers: CustomerMatch[] = [];
  for (const [kind, value] of [['email', f.customerEmail], ['phone', f.customerPhone]] as const) {
    if (value !== undefined) customers.push({ kind, ...(await customerHashes(em, keys.blindIndexKey, f, kind, value)) });
  }
  const { rows, total } = await adminTransactionPage(em, f, customers);
  return { items: rows.map((r) => toTransaction(r, keys)), total };
}

/** The transaction with the SMS that matched it or list it as a candidate (no SMS text). */
export async function getAdminTransactionDetail(em: Db, keys: PersonalDataKeys, transactionId: number): Promise<AdminTransaction & { sms_records: TransactionSms[] }> {
  const t = await getAdminTransaction(em, keys, transactionId);
  const rows = await smsOfTransaction(em, t.brand_id, transactionId);
  return {
    ...t,
    sms_records: rows.map((r) => ({
      id: r.id,
      match_status: r.match_status,
      role: r.transaction_id === transactionId ? 'matched' : 'candidate',
      parsed_amount: r.parsed_amount,
      parsed_trx_id: r.parsed_trx_id,
      confidence: trimDecimal(r.confidence),
      received_at: r.received_at.toISOString(),
    })),
  };
}

const txState = (t: TransactionRecord) => ({ status: t.status, amount: t.amount, currency: t.currency, gateway_trx_id: t.gatewayTrxId });

/**
 * Completes an open transaction on the admin's word, optionally naming the SMS
 * that proves it, and records it: the completion, its `payment.completed`
 * event, the SMS record's resolution and the audit row commit together. The
 * audit row keeps the person's note, an accepted SMS amount, and a corrected
 * claim's both ids (`before.gateway_trx_id` the customer's, `after` the SMS's).
 */
export async function verifyTransactionAudited(
  em: Db,
  keys: PersonalDataKeys,
  who: AuditActor,
  transactionId: number,
  input: { smsRecordId?: number; note?: string; acceptAmountDifference?: boolean; correctTrxId?: boolean },
): Promise<AdminTransaction> {
  return withAudit(em, who, async (tx) => {
    const before = await getTransaction(tx, transactionId);
    const { transaction, smsRecordId, smsAmountAccepted, correctedFromTrxId, note } = await verifyTransactionManually(tx, {
      transactionId,
      smsRecordId: input.smsRecordId ?? null,
      actor: who.actor,
      note: input.note ?? null,
      acceptAmountDifference: input.acceptAmountDifference,
      correctTrxId: input.correctTrxId,
    });
    return {
      result: await getAdminTransaction(tx, keys, transactionId),
      audit: {
        action: 'transaction.verify',
        targetType: 'transaction',
        targetId: transactionId,
        brandId: transaction.brandId,
        before: txState(before),
        after: {
          ...txState(transaction),
          sms_record_id: smsRecordId,
          ...(smsAmountAccepted === null ? {} : { sms_amount_accepted: smsAmountAccepted }),
          ...(correctedFromTrxId === null ? {} : { claimed_gateway_trx_id: correctedFromTrxId }),
          ...(note === null ? {} : { note }),
        },
      },
    };
  });
}

/** Fails an open transaction on the admin's word and records it, in one transaction. */
export async function rejectTransactionAudited(em: Db, keys: PersonalDataKeys, who: AuditActor, transactionId: number, input: { reason: string }): Promise<AdminTransaction> {
  return withAudit(em, who, async (tx) => {
    const before = await getTransaction(tx, transactionId);
    const { transaction, resolvedSmsRecordIds } = await rejectTransaction(tx, { transactionId, actor: who.actor, reason: input.reason });
    return {
      result: await getAdminTransaction(tx, keys, transactionId),
      audit: {
        action: 'transaction.reject',
        targetType: 'transaction',
        targetId: transactionId,
        brandId: transaction.brandId,
        before: txState(before),
        after: { ...txState(transaction), resolved_sms_record_ids: resolvedSmsRecordIds, reason: transaction.failureReason },
      },
    };
  });
}
