import { z } from 'zod';
import { amountSchema, currencySchema, livemodeSchema, timestampSchema, uuidSchema } from './common/index.ts';
import { webhookEventNames, type WebhookEventName } from './vocabulary.ts';

/**
 * Webhook event bodies: `{id, event, created_at, livemode, data}`, one schema per event name.
 *
 * `data` objects are open (`looseObject`): the members listed here are the ones a
 * receiver can rely on; the service may add members later without a new version,
 * so receivers must ignore members they do not know. The server validates `data`
 * against these schemas when the event is recorded, so a payload that breaks the
 * contract fails the state change that caused it instead of reaching a merchant.
 */

export const webhookEventNameSchema = z.enum(webhookEventNames).describe('Webhook event name.');

/** Data of `payment.*` events: the payment as `GET /api/v1/payments/{payment_id}` shows it. */
export const paymentEventDataSchema = z
  .looseObject({
    payment_id: uuidSchema.describe("The payment's public id (`payment_id` of `POST /api/v1/payments`): match the event to your order by it."),
    transaction_id: z.number().int().nullable().optional().describe("Numeric id of the payment's latest transaction, or null when the payment never got one (`object` is then `payment_intent`)."),
    trx_id: z.string().nullable().describe("The service's reference of that transaction (what the customer saw; refund by it); null only for a payment that ended before a transaction existed."),
    gateway_trx_id: z.string().nullable().optional().describe("The gateway's (wallet's) reference for the money sent, when known: reconcile with the gateway's statement by it."),
    amount: amountSchema.describe("Amount charged on the gateway, in its currency, when a transaction exists; else the amount asked for (`requested_amount`). Decimal string with two places."),
    currency: currencySchema,
    fee: amountSchema.nullable().optional().describe('Fee charged, when a transaction exists.'),
    status: z.string().describe('Status of the payment after the change (`completed`, `failed`, `expired`, `canceled`).'),
    gateway: z.string().nullable().optional().describe('Gateway code.'),
    method: z.string().nullable().optional().describe('Payment method.'),
    reference: z.string().nullable().optional().describe("The merchant's own reference."),
    created_at: timestampSchema.optional(),
    completed_at: timestampSchema.nullable().optional(),
    failure_reason: z.string().nullable().optional().describe('Why the payment failed (payment.failed).'),
  })
  .meta({ id: 'PaymentEventData' });

/** `trx_id` is required on completed and failed payments: a transaction exists by then. */
const paymentWithTransactionSchema = paymentEventDataSchema.extend({
  trx_id: z.string().describe('Service transaction reference.'),
});

/** Data of `refund.*` events: the refund as `GET /api/v1/refunds/{trx_id}` shows it. */
export const refundEventDataSchema = z
  .looseObject({
    id: z.number().int().describe('Refund id.'),
    uuid: uuidSchema,
    transaction_id: z.number().int().describe('Internal id of the refunded transaction.'),
    trx_id: z.string().describe('Service reference of the refunded transaction.'),
    gateway_trx_id: z.string().nullable().optional(),
    amount: amountSchema.describe('Refunded amount.'),
    reason: z.string().nullable().optional(),
    status: z.string().describe('`completed` or `failed`.'),
    processed_at: timestampSchema.nullable().optional(),
    created_at: timestampSchema.optional(),
  })
  .meta({ id: 'RefundEventData' });

/** Data of `device.*` events: a paired phone stopped or resumed reporting. */
export const deviceEventDataSchema = z
  .looseObject({
    device_uuid: uuidSchema.describe('The device.'),
    name: z.string().nullable().optional().describe('Device name given at pairing.'),
    status: z.enum(['offline', 'online']),
    last_seen_at: timestampSchema.nullable().describe('Last authenticated call from the device.'),
    last_heartbeat_at: timestampSchema.nullable().optional(),
  })
  .meta({ id: 'DeviceEventData' });

const envelope = <E extends WebhookEventName, D extends z.ZodType>(event: E, data: D, id: string) =>
  z
    .object({
      id: z.string().describe('Event id (`evt_…`); also sent as `X-Webhook-Id`, stable across retries. Deduplicate on it.'),
      event: z.literal(event),
      created_at: timestampSchema.describe('When the event happened.'),
      livemode: livemodeSchema.describe('False for an event of a test-mode object (or a test event sent with a test key); the same endpoint receives both modes.'),
      test: z
        .literal(true)
        .optional()
        .describe('Present, and true, only on a sample event sent by `POST /api/v1/webhooks/tests` (its ids name no real object; the delivery also carries `X-Webhook-Test: true`). Never act on one as on a real event.'),
      data,
    })
    .meta({ id });

/** Data of `gateway.sms_unparsed`: a wallet's official messages stopped parsing (its wording probably changed). */
export const smsUnparsedEventDataSchema = z
  .looseObject({
    alarm_id: z.number().int().describe('The alarm (one per episode; raised once until the messages parse again).'),
    gateway: z.string().describe('Gateway code whose official sender it is.'),
    sender: z.string().describe('The official sender id, as configured on the gateway (`bKash`).'),
    window_minutes: z.number().int().describe('Length of the recent window.'),
    unparsed: z.number().int().describe("Messages of the window no template parsed."),
    total: z.number().int().describe('Messages of the window from this sender.'),
    share: z.string().describe('unparsed / total, e.g. "0.8000".'),
    baseline_share: z.string().describe('The same share over the baseline window before it.'),
    raised_at: timestampSchema,
  })
  .meta({ id: 'SmsUnparsedEventData' });

/** Data of `invoice.*` events: the invoice's state after the change (`GET /api/v1/invoices/{id}` has the rest). */
export const invoiceEventDataSchema = z
  .looseObject({
    invoice_id: uuidSchema.describe("The invoice's id (`GET /api/v1/invoices/{id}`)."),
    number: z.string().describe('The invoice number, e.g. `INV-0001`.'),
    status: z.string().describe('Status after the change: `draft` or `open` (created), `paid`, `overdue`, `void`.'),
    customer_id: uuidSchema.describe("The customer's `uuid`."),
    currency: currencySchema,
    total: amountSchema.describe('What the invoice asks for in all.'),
    amount_paid: amountSchema.describe('Sum of its completed payments.'),
    amount_remaining: amountSchema.describe('total − amount paid, never below zero.'),
    due_date: z.string().describe('Due date (YYYY-MM-DD).'),
    payment_id: uuidSchema.nullable().optional().describe('`invoice.paid`: the payment whose completion paid it.'),
  })
  .meta({ id: 'InvoiceEventData' });

export const webhookEventSchemas = {
  'payment.completed': envelope('payment.completed', paymentWithTransactionSchema, 'PaymentCompletedEvent'),
  'payment.failed': envelope('payment.failed', paymentWithTransactionSchema, 'PaymentFailedEvent'),
  'payment.expired': envelope('payment.expired', paymentEventDataSchema, 'PaymentExpiredEvent'),
  /** The merchant canceled an open payment (`POST /api/v1/payments/{payment_id}/cancel`); `status` is `canceled`. */
  'payment.canceled': envelope('payment.canceled', paymentEventDataSchema, 'PaymentCanceledEvent'),
  'refund.completed': envelope('refund.completed', refundEventDataSchema, 'RefundCompletedEvent'),
  'refund.failed': envelope('refund.failed', refundEventDataSchema, 'RefundFailedEvent'),
  'device.offline': envelope('device.offline', deviceEventDataSchema, 'DeviceOfflineEvent'),
  'device.online': envelope('device.online', deviceEventDataSchema, 'DeviceOnlineEvent'),
  'gateway.sms_unparsed': envelope('gateway.sms_unparsed', smsUnparsedEventDataSchema, 'GatewaySmsUnparsedEvent'),
  /** An invoice was created (as a draft or directly open). */
  'invoice.created': envelope('invoice.created', invoiceEventDataSchema, 'InvoiceCreatedEvent'),
  /** The invoice's completed payments reached its total. */
  'invoice.paid': envelope('invoice.paid', invoiceEventDataSchema, 'InvoicePaidEvent'),
  /** An open invoice passed its due date unpaid (sent once). */
  'invoice.overdue': envelope('invoice.overdue', invoiceEventDataSchema, 'InvoiceOverdueEvent'),
  /** The merchant or an operator voided the invoice. */
  'invoice.voided': envelope('invoice.voided', invoiceEventDataSchema, 'InvoiceVoidedEvent'),
} as const satisfies Record<WebhookEventName, z.ZodType>;

/** Any webhook body, discriminated by `event`. */
export const webhookEventSchema = z
  .discriminatedUnion('event', [
    webhookEventSchemas['payment.completed'],
    webhookEventSchemas['payment.failed'],
    webhookEventSchemas['payment.expired'],
    webhookEventSchemas['payment.canceled'],
    webhookEventSchemas['refund.completed'],
    webhookEventSchemas['refund.failed'],
    webhookEventSchemas['device.offline'],
    webhookEventSchemas['device.online'],
    webhookEventSchemas['gateway.sms_unparsed'],
    webhookEventSchemas['invoice.created'],
    webhookEventSchemas['invoice.paid'],
    webhookEventSchemas['invoice.overdue'],
    webhookEventSchemas['invoice.voided'],
  ])
  .meta({ id: 'WebhookEvent' });

export type WebhookEventBody = z.infer<typeof webhookEventSchema>;
export type WebhookEventOf<E extends WebhookEventName> = z.infer<(typeof webhookEventSchemas)[E]>;
