import { AppError } from '../../../contract/common/errors.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { PaymentResource } from '../../../contract/merchant/payments.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { decryptNameAndEmail } from '../customers/service.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import type { TransactionStatus } from './entities.ts';
import { pgDate } from '../../infra/database/pg-date.ts';

/** Drops the zeros numeric(20,10) pads with. */
export function trimDecimal(s: string | null): string | null {
  return s !== null && s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

export interface PaymentRow {
  intent_id: string;
  payment_id: string;
  brand_id: string;
  intent_amount: string;
  intent_currency: string;
  reference: string | null;
  metadata: Record<string, unknown>;
  intent_status: 'pending' | 'completed' | 'expired' | 'canceled';
  expires_at: string | Date;
  intent_created_at: string | Date;
  customer_id: string | null;
  transaction_id: string | null;
  trx_id: string | null;
  gateway_trx_id: string | null;
  amount: string | null;
  currency: string | null;
  fee: string | null;
  exchange_rate: string | null;
  status: TransactionStatus | null;
  gateway: string | null;
  method: string | null;
  failure_reason: string | null;
  created_at: string | Date | null;
  completed_at: string | Date | null;
}

export const PAYMENT_COLUMNS = `
         i.id AS intent_id, i.uuid AS payment_id, i.brand_id, i.amount::text AS intent_amount, i.currency AS intent_currency,
         i.reference, i.metadata, i.status AS intent_status, i.expires_at, i.created_at AS intent_created_at, i.customer_id,
         t.id AS transaction_id, t.trx_id, t.gateway_trx_id, t.amount::text AS amount, t.currency, t.fee::text AS fee,
         t.exchange_rate::text AS exchange_rate, t.status, g.code AS gateway, t.method, t.failure_reason, t.created_at, t.completed_at`;

export const PAYMENT_FROM = `
    FROM payment_intents i
    LEFT JOIN LATERAL (
      SELECT * FROM transactions tt WHERE tt.intent_id = i.id ORDER BY tt.created_at DESC, tt.id DESC LIMIT 1
    ) t ON true
    LEFT JOIN gateways g ON g.id = t.gateway_id`;

/** The intent with its latest transaction (if any); append a WHERE on `i`. */
const PAYMENT_SELECT = `SELECT ${PAYMENT_COLUMNS} ${PAYMENT_FROM}`;

/**
 * The same with the customer's encrypted name and email joined in. One round
 * trip instead of a second query for the customer: on the merchant read path
 * each query is a socket write and a wake-up of a database backend, and that
 * was half of what the lookup cost (bench/merchant-reads.ts, BENCHMARKS.md).
 */
const PAYMENT_VIEW_SELECT = `
  SELECT ${PAYMENT_COLUMNS}, c.uuid AS customer_uuid, c.brand_id AS customer_brand_id,
         c.name_encrypted AS customer_name_encrypted, c.email_encrypted AS customer_email_encrypted ${PAYMENT_FROM}
    LEFT JOIN customers c ON c.id = i.customer_id`;

/**
 * The API shape of a payment: the latest transaction when one exists, else the
 * intent, with the same field names (README.md, Merchant API). An intent past its expiry shows
 * `expired` even before the expiry job has moved it.
 */
/** Without `livemode`: the caller knows the mode it read (getPaymentView), and event bodies carry it on the envelope. */
export function toPaymentResource(r: PaymentRow, customer: PaymentResource['customer'], now = new Date()): Omit<PaymentResource, 'livemode'> {
  const base = {
    payment_id: r.payment_id,
    reference: r.reference,
    requested_amount: r.intent_amount,
    requested_currency: r.intent_currency,
    expires_at: pgDate(r.expires_at).toISOString(),
    customer,
    metadata: r.metadata,
  };
  // A canceled payment shows `canceled` in both forms: its pending transaction failed only as a consequence.
  const canceled = r.intent_status === 'canceled';
  if (r.transaction_id === null) {
    const expired = r.intent_status === 'expired' || pgDate(r.expires_at).getTime() <= now.getTime();
    return {
      object: 'payment_intent',
      id: Number(r.intent_id),
      transaction_id: null,
      trx_id: null,
      gateway_trx_id: null,
      amount: r.intent_amount,
      currency: r.intent_currency,
      fee: null,
      status: canceled ? 'canceled' : expired ? 'expired' : 'pending',
      gateway: null,
      method: null,
      exchange_rate: null,
      failure_reason: null,
      created_at: pgDate(r.intent_created_at).toISOString(),
      completed_at: null,
      ...base,
    };
  }
  return {
    object: 'transaction',
    id: Number(r.transaction_id),
    transaction_id: Number(r.transaction_id),
    trx_id: r.trx_id,
    gateway_trx_id: r.gateway_trx_id,
    amount: r.amount!,
    currency: r.currency!,
    fee: r.fee,
    status: canceled ? 'canceled' : r.status!,
    gateway: r.gateway,
    method: r.method,
    exchange_rate: trimDecimal(r.exchange_rate),
    failure_reason: r.failure_reason,
    created_at: pgDate(r.created_at!).toISOString(),
    completed_at: r.completed_at ? pgDate(r.completed_at).toISOString() : null,
    ...base,
  };
}

/**
 * A brand's payment by its public id. Unknown, another brand's and malformed ids
 * all answer PAYMENT_NOT_FOUND, so ids of other brands cannot be probed.
 */
export async function getPaymentView(em: EntityManager, keys: PersonalDataKeys, brandId: number, mode: Mode, paymentId: string): Promise<PaymentResource> {
  if (!isUuid(paymentId)) throw new AppError('PAYMENT_NOT_FOUND');
  // The other mode's payment answers like an unknown id: a key sees only its own mode.
  const rows = await em.execute<
    Array<PaymentRow & { customer_uuid: string; customer_brand_id: string; customer_name_encrypted: string | null; customer_email_encrypted: string | null }>
  >(
    `${PAYMENT_VIEW_SELECT} WHERE i.uuid = ? AND i.brand_id = ? AND i.mode = ?`,
    [paymentId.toLowerCase(), brandId, mode],
  );
  const row = rows[0];
  if (!row) throw new AppError('PAYMENT_NOT_FOUND');
  const customer =
    row.customer_id === null
      ? null
      : decryptNameAndEmail(keys, {
          brand_id: row.customer_brand_id,
          uuid: row.customer_uuid,
          name_encrypted: row.customer_name_encrypted,
          email_encrypted: row.customer_email_encrypted,
        });
  return { ...toPaymentResource(row, customer), livemode: mode === 'live' };
}

/**
 * The payment as webhook events carry it: without the customer, because event
 * payloads are stored and resent in clear.
 */
export async function paymentEventData(em: EntityManager, intentId: number): Promise<Record<string, unknown>> {
  const rows = await em.execute<PaymentRow[]>(`${PAYMENT_SELECT} WHERE i.id = ?`, [intentId]);
  return paymentEventDataOf(rows[0]!);
}

/** paymentEventData from a row the caller already has (as PAYMENT_SELECT reads it). */
export function paymentEventDataOf(row: PaymentRow): Record<string, unknown> {
  const { customer: _customer, ...data } = toPaymentResource(row, null);
  return data;
}
