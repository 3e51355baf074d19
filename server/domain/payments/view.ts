import { AppError } from '../../../contract/common/errors.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { PaymentResource } from '../../../contract/merchant/payments.ts';
import { decryptNameAndEmail } from '../customers/service.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import type { Db } from '../db.ts';
import { paymentOfBrand, paymentRowOfIntent, type PaymentRow } from './queries/payments.ts';

/** Drops the zeros numeric(20,10) pads with. */
export function trimDecimal(s: string | null): string | null {
  return s !== null && s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/**
 * The API shape of a payment: the latest transaction when one exists, else the
 * intent, with the same field names (README.md, Merchant API). An intent past its expiry shows
 * `expired` even before the expiry job has moved it.
 */
/** Omit over each member of a union (TypeScript's Omit merges the members, losing the `object` discriminant). */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Without `livemode`: the caller knows the mode it read (getPaymentView), and event bodies carry it on the envelope. */
export function toPaymentResource(r: PaymentRow, customer: PaymentResource['customer'], now = new Date()): DistributiveOmit<PaymentResource, 'livemode'> {
  const base = {
    payment_id: r.payment_id,
    reference: r.reference,
    requested_amount: r.intent_amount,
    requested_currency: r.intent_currency,
    expires_at: r.expires_at.toISOString(),
    customer,
    metadata: r.metadata,
  };
  // A canceled payment shows `canceled` in both forms: its pending transaction failed only as a consequence.
  const canceled = r.intent_status === 'canceled';
  if (r.transaction_id === null) {
    const expired = r.intent_status === 'expired' || r.expires_at.getTime() <= now.getTime();
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
      created_at: r.intent_created_at.toISOString(),
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
    gateway: r.gateway_code,
    method: r.method,
    exchange_rate: trimDecimal(r.exchange_rate),
    failure_reason: r.failure_reason,
    created_at: r.created_at!.toISOString(),
    completed_at: r.completed_at?.toISOString() ?? null,
    ...base,
  };
}

/**
 * A brand's payment by its public id. Unknown, another brand's and malformed ids
 * all answer PAYMENT_NOT_FOUND, so ids of other brands cannot be probed.
 */
export async function getPaymentView(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, paymentId: string): Promise<PaymentResource> {
  if (!isUuid(paymentId)) throw new AppError('PAYMENT_NOT_FOUND');
  // The other mode's payment answers like an unknown id: a key sees only its own mode.
  // The customer's encrypted name and email are joined in: one round trip
  // instead of a second query for the customer. On the merchant read path each
  // query is a socket write and a wake-up of a database backend, and that was
  // half of what the lookup cost (bench/merchant-reads.ts, BENCHMARKS.md).
  const row = await paymentOfBrand(em, { uuid: paymentId.toLowerCase(), brandId, mode });
  if (!row) throw new AppError('PAYMENT_NOT_FOUND');
  const customer =
    row.customer_id === null || row.customer_uuid === null
      ? null
      : decryptNameAndEmail(keys, {
          brand_id: row.customer_brand_id!,
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
export async function paymentEventData(em: Db, intentId: number): Promise<Record<string, unknown>> {
  return paymentEventDataOf(await paymentRowOfIntent(em, intentId));
}

/** paymentEventData from a row the caller already has (as paymentQuery reads it). */
export function paymentEventDataOf(row: PaymentRow): Record<string, unknown> {
  const { customer: _customer, ...data } = toPaymentResource(row, null);
  return data;
}
