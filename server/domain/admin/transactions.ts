import type { EntityManager } from '../../infra/database/orm.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import type { SmsRecordStatus } from '../sms-intake/entities.ts';
import type { TransactionStatus } from '../payments/entities.ts';
import { pgDate, pgDateOrNull } from '../../infra/database/pg-date.ts';
import { getTransaction, type TransactionRecord } from '../payments/transactions.ts';
import { trimDecimal } from '../payments/view.ts';
import { rejectTransaction, verifyTransactionManually } from '../sms/review.ts';
import { AppError } from '../../../contract/common/errors.ts';
import { scopeParam } from '../brands/scope.ts';

export interface AdminTransaction {
  id: number;
  trx_id: string;
  payment_id: string;
  brand_id: number;
  mode: 'live' | 'test';
  gateway: string;
  gateway_type: 'manual' | 'automatic';
  method: string;
  gateway_trx_id: string | null;
  amount: string;
  currency: string;
  fee: string;
  exchange_rate: string | null;
  requested_amount: string;
  requested_currency: string;
  reference: string | null;
  status: TransactionStatus;
  failure_reason: string | null;
  completion_source: string | null;
  created_at: string;
  completed_at: string | null;
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

type Row = Record<string, any>;

const SELECT = `
  SELECT t.id, t.trx_id, i.uuid AS payment_id, t.brand_id, t.mode, g.code AS gateway, g.type AS gateway_type, t.method, t.gateway_trx_id,
         t.amount::text AS amount, t.currency, t.fee::text AS fee, t.exchange_rate::text AS exchange_rate,
         i.amount::text AS requested_amount, i.currency AS requested_currency, i.reference,
         t.status, t.failure_reason, t.completion_source, t.created_at, t.completed_at
    FROM transactions t JOIN payment_intents i ON i.id = t.intent_id JOIN gateways g ON g.id = t.gateway_id`;

function toTransaction(r: Row): AdminTransaction {
  return {
    id: Number(r.id),
    trx_id: r.trx_id,
    payment_id: r.payment_id,
    brand_id: Number(r.brand_id),
    mode: r.mode,
    gateway: r.gateway,
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
    status: r.status,
    failure_reason: r.failure_reason,
    completion_source: r.completion_source,
    created_at: pgDate(r.created_at).toISOString(),
    completed_at: pgDateOrNull(r.completed_at)?.toISOString() ?? null,
  };
}

async function getAdminTransaction(em: EntityManager, transactionId: number): Promise<AdminTransaction> {
  const [row] = await em.execute<Row[]>(`${SELECT} WHERE t.id = ?`, [transactionId]);
  if (!row) throw new AppError('TRANSACTION_NOT_FOUND');
  return toTransaction(row);
}

export interface TransactionFilter {
  page: number;
  perPage: number;
  brandId?: number;
  /** A console operator's brands; absent or null: every brand. */
  brandIds?: number[] | null;
  mode?: 'live' | 'test';
  status?: TransactionStatus;
  gateway?: string;
  /** Service reference, or gateway reference (case-insensitive). */
  trxId?: string;
  /** Inclusive UTC dates, `YYYY-MM-DD`. */
  from?: string;
  to?: string;
}

/** Every brand's transactions, or one brand's, newest first. */
export async function listAdminTransactions(em: EntityManager, f: TransactionFilter): Promise<{ items: AdminTransaction[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, ...values: unknown[]) => {
    where.push(sql);
    params.push(...values);
  };
  if (f.brandId !== undefined) add('t.brand_id = ?', f.brandId);
  if (f.brandIds) add('t.brand_id IN (?)', scopeParam(f.brandIds));
  if (f.mode) add('t.mode = ?', f.mode);
  if (f.status) add('t.status = ?', f.status);
  if (f.gateway) add('g.code = ?', f.gateway);
  if (f.trxId) add('(t.trx_id = ? OR upper(t.gateway_trx_id) = upper(?))', f.trxId, f.trxId);
  if (f.from) add("t.created_at >= (?::date)::timestamp AT TIME ZONE 'UTC'", f.from);
  if (f.to) add("t.created_at < ((?::date + 1)::timestamp AT TIME ZONE 'UTC')", f.to);
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const [count] = await em.execute<Array<{ n: string }>>(
    `SELECT count(*) AS n FROM transactions t JOIN payment_intents i ON i.id = t.intent_id JOIN gateways g ON g.id = t.gateway_id ${clause}`,
    params,
  );
  const rows = await em.execute<Row[]>(`${SELECT} ${clause} ORDER BY t.created_at DESC, t.id DESC LIMIT ? OFFSET ?`, [
    ...params,
    f.perPage,
    (f.page - 1) * f.perPage,
  ]);
  return { items: rows.map(toTransaction), total: Number(count!.n) };
}

/** The transaction with the SMS that matched it or list it as a candidate (no SMS text). */
export async function getAdminTransactionDetail(em: EntityManager, transactionId: number): Promise<AdminTransaction & { sms_records: TransactionSms[] }> {
  const t = await getAdminTransaction(em, transactionId);
  const rows = await em.execute<Row[]>(
    `SELECT id, match_status, transaction_id, parsed_amount::text AS parsed_amount, parsed_trx_id, confidence::text AS confidence, received_at
       FROM sms_records
      WHERE brand_id = ? AND (transaction_id = ? OR ?::bigint = ANY(candidate_ids))
      ORDER BY created_at DESC, id DESC LIMIT 50`,
    [t.brand_id, transactionId, transactionId],
  );
  return {
    ...t,
    sms_records: rows.map((r) => ({
      id: Number(r.id),
      match_status: r.match_status,
      role: r.transaction_id !== null && Number(r.transaction_id) === transactionId ? 'matched' : 'candidate',
      parsed_amount: r.parsed_amount,
      parsed_trx_id: r.parsed_trx_id,
      confidence: trimDecimal(r.confidence),
      received_at: pgDate(r.received_at).toISOString(),
    })),
  };
}

const txState = (t: TransactionRecord) => ({ status: t.status, amount: t.amount, currency: t.currency, gateway_trx_id: t.gatewayTrxId });

/**
 * Completes an open transaction on the admin's word, optionally naming the SMS
 * that proves it, and records it: the completion, its `payment.completed`
 * event, the SMS record's resolution and the audit row commit together.
 */
export async function verifyTransactionAudited(
  em: EntityManager,
  who: AuditActor,
  transactionId: number,
  input: { smsRecordId?: number; note?: string; acceptAmountDifference?: boolean },
): Promise<AdminTransaction> {
  return withAudit(em, who, async (tx) => {
    const before = await getTransaction(tx, transactionId);
    const { transaction, smsRecordId, smsAmountAccepted } = await verifyTransactionManually(tx, {
      transactionId,
      smsRecordId: input.smsRecordId ?? null,
      actor: who.actor,
      note: input.note ?? null,
      acceptAmountDifference: input.acceptAmountDifference,
    });
    return {
      result: await getAdminTransaction(tx, transactionId),
      audit: {
        action: 'transaction.verify',
        targetType: 'transaction',
        targetId: transactionId,
        brandId: transaction.brandId,
        before: txState(before),
        after: { ...txState(transaction), sms_record_id: smsRecordId, ...(smsAmountAccepted === null ? {} : { sms_amount_accepted: smsAmountAccepted, note: input.note }) },
      },
    };
  });
}

/** Fails an open transaction on the admin's word and records it, in one transaction. */
export async function rejectTransactionAudited(em: EntityManager, who: AuditActor, transactionId: number, input: { reason: string }): Promise<AdminTransaction> {
  return withAudit(em, who, async (tx) => {
    const before = await getTransaction(tx, transactionId);
    const { transaction, resolvedSmsRecordIds } = await rejectTransaction(tx, { transactionId, actor: who.actor, reason: input.reason });
    return {
      result: await getAdminTransaction(tx, transactionId),
      audit: {
        action: 'transaction.reject',
        targetType: 'transaction',
        targetId: transactionId,
        brandId: transaction.brandId,
        before: txState(before),
        after: { ...txState(transaction), resolved_sms_record_ids: resolvedSmsRecordIds },
      },
    };
  });
}
