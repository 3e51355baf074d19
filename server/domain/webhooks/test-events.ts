import { randomUUID } from 'node:crypto';
import type { Mode, WebhookEventName } from '../../../contract/vocabulary.ts';
import { getDelivery, type DeliveryView } from './deliveries.ts';
import { endpointForTest } from './endpoints.ts';
import { recordEvent } from './outbox.ts';
import { transaction, type Db } from '../db.ts';

/**
 * A realistic `data` body for each event, valid against contract/events.ts
 * (recordEvent checks it), shaped like what the real event carries. Ids are
 * fresh and name no real object, so a receiver that looks them up finds
 * nothing instead of acting on someone's payment.
 */
export function sampleEventData(event: WebhookEventName, now = new Date()): Record<string, unknown> {
  const at = now.toISOString();
  const created = new Date(now.getTime() - 5 * 60_000).toISOString();
  const trxId = `TRX${randomUUID().replaceAll('-', '').slice(0, 16).toUpperCase()}`;
  const payment = {
    object: 'transaction',
    id: 0,
    payment_id: randomUUID(),
    transaction_id: 0,
    trx_id: trxId,
    gateway_trx_id: 'TEST0WEBHOOK',
    amount: '500.00',
    currency: 'BDT',
    fee: '0.00',
    gateway: 'bkash',
    method: 'wallet',
    reference: 'TEST-ORDER-1001',
    requested_amount: '500.00',
    requested_currency: 'BDT',
    exchange_rate: null,
    failure_reason: null,
    created_at: created,
    completed_at: null,
    expires_at: new Date(now.getTime() + 55 * 60_000).toISOString(),
    metadata: { order_id: 'TEST-ORDER-1001' },
  };
  const refund = {
    id: 0,
    uuid: randomUUID(),
    transaction_id: 0,
    trx_id: trxId,
    gateway_trx_id: 'TEST0WEBHOOK',
    amount: '100.00',
    currency: 'BDT',
    reason: 'Test refund',
    failure_reason: null,
    created_at: created,
  };
  const device = { device_uuid: randomUUID(), name: 'Test phone', last_seen_at: created, last_heartbeat_at: created };
  switch (event) {
    case 'payment.completed':
      return { ...payment, status: 'completed', completed_at: at };
    case 'payment.failed':
      return { ...payment, status: 'failed', failure_reason: 'Rejected by an operator (test event)' };
    case 'payment.expired':
      // An intent that expired before the customer chose a gateway: the intent form.
      return { ...payment, object: 'payment_intent', transaction_id: null, trx_id: null, gateway_trx_id: null, fee: null, gateway: null, method: null, status: 'expired' };
    case 'payment.canceled':
      // The merchant canceled before the customer paid: the intent form.
      return { ...payment, object: 'payment_intent', transaction_id: null, trx_id: null, gateway_trx_id: null, fee: null, gateway: null, method: null, status: 'canceled' };
    case 'refund.completed':
      return { ...refund, status: 'completed', processed_at: at };
    case 'refund.failed':
      return { ...refund, status: 'failed', failure_reason: 'Declined by the gateway (test event)', processed_at: at };
    case 'device.offline':
      return { ...device, status: 'offline' };
    case 'device.online':
      return { ...device, status: 'online', last_seen_at: at };
    case 'invoice.created':
    case 'invoice.paid':
    case 'invoice.overdue':
    case 'invoice.voided': {
      const status = { 'invoice.created': 'open', 'invoice.paid': 'paid', 'invoice.overdue': 'overdue', 'invoice.voided': 'void' }[event];
      const paid = event === 'invoice.paid';
      return {
        invoice_id: randomUUID(), number: 'INV-0000', status, customer_id: randomUUID(), currency: 'BDT', total: '1150.00',
        amount_paid: paid ? '1150.00' : '0.00', amount_remaining: paid ? '0.00' : '1150.00', due_date: at.slice(0, 10),
        payment_id: paid ? randomUUID() : null,
      };
    }
    case 'gateway.sms_unparsed':
      return { alarm_id: 0, gateway: 'bkash', sender: 'bKash', window_minutes: 60, unparsed: 8, total: 10, share: '0.8000', baseline_share: '0.0000', raised_at: at };
  }
}

/**
 * Sends a signed sample event to one endpoint (`endpointId`, or null: the brand's
 * default endpoint, for the singular route) through the ordinary outbox (one
 * delivery row, the same worker, retries and log), marked as a test event, with
 * `livemode` of the caller's mode. Nothing else changes.
 * No endpoint: WEBHOOK_ENDPOINT_NOT_FOUND; a disabled one: INVALID_STATE.
 */
export async function sendTestEvent(em: Db, input: { brandId: number; mode: Mode; event: WebhookEventName; endpointId?: number | null }): Promise<DeliveryView> {
  // Read back inside the transaction: the answer is the delivery as created
  // (pending, no attempt), not whatever a fast worker already made of it.
  return transaction(em, async (tx) => {
    const endpointId = await endpointForTest(tx, input, input.endpointId ?? null);
    const recorded = await recordEvent(tx, { brandId: input.brandId, mode: input.mode, event: input.event, data: sampleEventData(input.event), test: true, endpointId });
    const { attemptLog: _attempts, ...delivery } = await getDelivery(tx, input.brandId, recorded.deliveryId!);
    return delivery;
  });
}
