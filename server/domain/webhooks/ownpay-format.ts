import { createHmac } from 'node:crypto';
import { toOwnpayStatus } from '../../../contract/ownpay/index.ts';

/**
 * Deliveries to an endpoint whose `signing` is `ownpay`: the headers and body
 * OwnPay's WooCommerce and WHMCS plugins and its SDKs verify and read (README
 * "Coming from OwnPay"). Pure, and derived from the stored event body alone, so
 * every retry and replay of a delivery sends the same bytes.
 *
 * Their rule: the hex HMAC-SHA256 of the raw body with the endpoint secret,
 * sent as `X-Signature: sha256=<hex>` and as `X-OwnPay-Signature: <hex>`
 * (receivers read either and strip a `sha256=` prefix). The timestamp headers
 * are informational (it is not signed in their scheme).
 */

/** Our event names in OwnPay's spelling (`canceled` → `cancelled`); the rest are the same. */
const EVENT_NAMES: Record<string, string> = { 'payment.canceled': 'payment.cancelled' };

export const ownpayEventName = (event: string): string => EVENT_NAMES[event] ?? event;

interface StoredEvent {
  id: string;
  event: string;
  created_at: string;
  livemode: boolean;
  test?: boolean;
  data: Record<string, unknown>;
}

/**
 * The OwnPay body of one of our stored events: `{event, data, timestamp}`.
 * For `payment.*`, `data` carries the fields their handlers read: `status`
 * (OwnPay spelling), `trx_id` and `transaction_id` (both our transaction
 * reference), `gateway_trx_id`, `payment_id` and `id` (the payment id),
 * `amount`/`currency` of the intent (what the plugins compare with the order),
 * `reference`, `metadata`; plus the charged amount as `charged_amount` and
 * `charged_currency`, and our event id as `event_id`.
 */
export function ownpayBody(storedPayload: string): string {
  const stored = JSON.parse(storedPayload) as StoredEvent;
  const d = stored.data;
  const data: Record<string, unknown> = d.payment_id !== undefined
    ? {
        id: d.payment_id,
        payment_id: d.payment_id,
        trx_id: d.trx_id ?? null,
        transaction_id: d.trx_id ?? null,
        gateway_trx_id: d.gateway_trx_id ?? null,
        status: toOwnpayStatus(d.status),
        amount: d.requested_amount ?? d.amount,
        currency: d.requested_currency ?? d.currency,
        charged_amount: d.amount,
        charged_currency: d.currency,
        fee: d.fee ?? null,
        gateway: d.gateway ?? null,
        method: d.method ?? null,
        reference: d.reference ?? null,
        metadata: d.metadata ?? {},
        created_at: d.created_at ?? null,
        completed_at: d.completed_at ?? null,
        failure_reason: d.failure_reason ?? null,
      }
    : d.trx_id !== undefined && d.uuid !== undefined
      ? // A refund: `transaction_id` is our transaction reference here too (OwnPay's handlers take it as one).
        { ...d, transaction_id: d.trx_id, refund_id: d.uuid, internal_transaction_id: d.transaction_id }
      : { ...d };
  data.event_id = stored.id;
  data.livemode = stored.livemode;
  if (stored.test) data.test = true;
  return JSON.stringify({ event: ownpayEventName(stored.event), data, timestamp: Math.floor(Date.parse(stored.created_at) / 1000) });
}

/** Hex HMAC-SHA256 of the raw body: OwnPay's whole signature. */
export function ownpaySignature(secret: string, rawBody: string): string {
  return createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex');
}

/**
 * Headers of an OwnPay delivery. Their scheme has room for one signature: the
 * endpoint's current secret signs (a rotated-out one stops signing at once for
 * these endpoints; README "Coming from OwnPay").
 */
export function ownpayHeaders(secret: string, rawBody: string, event: string, timestamp: number): Record<string, string> {
  const hex = ownpaySignature(secret, rawBody);
  return {
    'x-signature': `sha256=${hex}`,
    'x-ownpay-signature': hex,
    'x-timestamp': String(timestamp),
    'x-ownpay-timestamp': String(timestamp),
    'x-event': ownpayEventName(event),
    'x-ownpay-event': ownpayEventName(event),
  };
}
