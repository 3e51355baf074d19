import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  amountSchema,
  currencySchema,
  meta,
  ok,
  timestampSchema,
  uuidSchema,
} from '../common/index.ts';
import { paymentStatuses, transactionStatuses, gatewayTypes, walletAccountTypes } from '../vocabulary.ts';

const c = initContract();

export const CHECKOUT_PATH_PREFIX = '/api/checkout/v1';

/** A gateway that can take this payment, with what paying on it costs. */
export const checkoutGatewaySchema = z
  .object({
    code: z.string().describe('Gateway code: send it as `gateway` to start paying.'),
    name: z.string().describe('Name to show.'),
    type: z.enum(gatewayTypes).describe('`manual`: the customer sends money and enters the gateway transaction id; `automatic`: the customer is redirected to the gateway.'),
    methods: z.array(z.string()).describe('Payment methods; the first is the default.'),
    amount: amountSchema.describe("Amount to pay on this gateway, in the gateway's currency (converted when it differs from the payment's)."),
    currency: currencySchema.describe("The gateway's currency for this payment."),
    fee: amountSchema.describe('Gateway fee the customer pays on top of `amount`, in the same currency: "0.00" when the merchant pays the fee.'),
    amount_to_send: amountSchema.describe('The one number to send: `amount` + `fee`. The wallet SMS must carry exactly this amount.'),
    converted: z.boolean().describe("True when `amount` was converted from the payment's currency."),
    exchange_rate: z.string().nullable().describe('Gateway currency units per payment currency unit used for the conversion, or null.'),
    min_amount: amountSchema.describe("The gateway's smallest amount, in its currency."),
    max_amount: amountSchema.nullable().describe("The gateway's largest amount, or null without a maximum."),
    receiving_account: z
      .string()
      .nullable()
      .describe("Manual gateways: the account number to send the money to: the merchant's own wallet account chosen for this payment (the same on every load of the page), else the gateway's."),
    receiving_account_type: z
      .enum(walletAccountTypes)
      .nullable()
      .describe("What the customer does in the wallet app to pay it: `personal` Send Money, `agent` Cash Out, `merchant` Payment. Null when the merchant has no account of its own on the gateway."),
    instructions: z.string().nullable().describe('Manual gateways: how to send the money.'),
  })
  .meta({ id: 'CheckoutGateway' });

/** The payment's latest transaction as the customer may see it. */
export const checkoutTransactionSchema = z
  .object({
    trx_id: z.string().describe('Service transaction reference (show it to the customer for support).'),
    gateway: z.string().describe('Gateway code.'),
    gateway_name: z.string().describe('Gateway name to show.'),
    gateway_type: z.enum(gatewayTypes),
    method: z.string(),
    status: z.enum(transactionStatuses).describe('Transaction status.'),
    amount: amountSchema.describe("Amount charged, in the gateway's currency."),
    currency: currencySchema,
    fee: amountSchema.describe('Gateway fee the customer pays on top of `amount`: "0.00" when the merchant pays the fee.'),
    amount_to_send: amountSchema.describe('What the customer was told to send and the wallet SMS must carry: `amount` + `fee`.'),
    gateway_trx_id: z.string().nullable().describe("The gateway's transaction id, once known."),
    failure_reason: z.string().nullable().describe('Why the transaction failed, or null.'),
    created_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
    redirect_url: z
      .string()
      .nullable()
      .describe('Automatic gateways while `processing`: the gateway page where the customer finishes paying. Null otherwise.'),
    gateway_trx_id_changes_left: z
      .number()
      .int()
      .min(0)
      .nullable()
      .describe(
        'Manual gateways while `awaiting_verification`: how many more times the customer may replace `gateway_trx_id` (a mistyped id) with `PUT .../transaction/gateway-trx-id`; 0 once used up. Null when it cannot be replaced.',
      ),
    phone_check_until: timestampSchema
      .nullable()
      .describe(
        "Manual gateways while `awaiting_verification`: no SMS proves the submitted id yet and the service is asking the merchant's phone for it; the page says it is checking with the merchant's phone until this time, or until the phone answers (the status stream then sends `checking_phone: false`, or `completed`). Null otherwise: the ordinary waiting for verification.",
      ),
  })
  .meta({ id: 'CheckoutTransaction' });

/** Everything the hosted checkout page shows. */
export const checkoutPaymentSchema = z
  .object({
    payment_id: uuidSchema,
    brand: z
      .object({
        name: z.string().describe('Name of the merchant being paid.'),
        logo_url: z.string().nullable().describe("The brand's logo (PNG, JPEG or WebP), a path on this service that changes with the image; null: none (the hosted page shows the name's initial)."),
        primary_color: z.string().nullable().describe("The brand's colour, `#rrggbb`; null: the default."),
        button_text_color: z.string().describe('White or dark: whichever reads better on `primary_color` (WCAG contrast), for a custom front end\'s buttons.'),
        support_phone: z.string().nullable().describe('Where customers may call the merchant; null: not given.'),
        support_email: z.string().nullable().describe('Where customers may write to the merchant; null: not given.'),
      })
      .meta({ id: 'CheckoutBrand' }),
    amount: amountSchema.describe("Amount requested, in the payment's currency."),
    currency: currencySchema,
    reference: z.string().nullable().describe("The merchant's reference (order number)."),
    status: z
      .enum(paymentStatuses)
      .describe('`pending` (nothing paid yet), the latest transaction\'s status while it is open or after it failed, `completed`, `expired`, or `canceled` (by the merchant).'),
    payable: z.boolean().describe('True when a new transaction can be started now (status `pending` or `failed`, not expired, and some gateway can take it).'),
    expires_at: timestampSchema.describe('When the payment link expires.'),
    gateways: z
      .array(checkoutGatewaySchema)
      .describe("Gateways that can take this payment now (enabled, currency convertible, amount within their limits); empty when the payment is not payable."),
    transaction: checkoutTransactionSchema.nullable().describe('The latest transaction, or null before the first one.'),
    redirect_url: z
      .string()
      .nullable()
      .describe(
        "Once the payment is completed: the merchant's success URL to send the customer to, carrying the payment id (`{PAYMENT_ID}` replaced, else `payment_id` appended); null when the merchant gave none, or before completion.",
      ),
    not_payable_reason: z
      .string()
      .nullable()
      .describe('Set when the payment is open but no gateway can take it (currency without a rate, amount outside every limit): why, in words for the customer. `payable` is then false.'),
  })
  .meta({ id: 'CheckoutPayment' });

export const startCheckoutTransactionBodySchema = z
  .strictObject({
    gateway: z.string().min(1).max(50).describe('Code of one of the payment\'s `gateways`.'),
    method: z.string().min(1).max(50).optional().describe("One of the gateway's methods (default: its first)."),
    gateway_trx_id: z
      .string()
      .trim()
      .min(1, 'gateway_trx_id must not be empty')
      .max(100)
      .optional()
      .describe('Manual gateways (required there): the transaction id the gateway gave the customer for the money sent. Not taken by automatic gateways.'),
    sender_number: z
      .string()
      .trim()
      .min(1)
      .max(32)
      .optional()
      .describe('Manual gateways, optional: the phone number the money was sent from (helps verification).'),
  })
  .meta({ id: 'StartCheckoutTransactionRequest' });

export const replaceCheckoutSubmissionBodySchema = z
  .strictObject({
    gateway_trx_id: z
      .string()
      .trim()
      .min(1, 'gateway_trx_id must not be empty')
      .max(100)
      .describe('The correct transaction id the gateway gave the customer; it replaces the one submitted before.'),
    sender_number: z
      .string()
      .trim()
      .min(1)
      .max(32)
      .optional()
      .describe('Optional: the phone number the money was sent from. Replaces the one given before (cleared when absent).'),
  })
  .meta({ id: 'ReplaceCheckoutSubmissionRequest' });

export const checkoutCancellationSchema = z
  .object({
    cancel_url: z.string().nullable().describe("The merchant's cancel URL to send the customer to, or null when the merchant gave none."),
  })
  .meta({ id: 'CheckoutCancellation' });

const paymentIdParams = z.object({ payment_id: z.string().describe('The payment id (UUID) from the checkout URL.') });

export const checkoutPaymentsContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/payments/:payment_id',
      summary: 'Get the payment to pay',
      description:
        'What the hosted checkout page shows: the merchant, the amount, the gateways that can take it (converted amount and fee per gateway) and the latest transaction. ' +
        'An unknown or malformed id is `PAYMENT_NOT_FOUND`; a payment of a disabled brand is `BRAND_DISABLED`. An expired payment answers 200 with status `expired` (the page shows `Payment link has expired`).',
      pathParams: paymentIdParams,
      responses: { 200: ok(checkoutPaymentSchema) },
      metadata: meta({ auth: 'checkout', tag: 'Checkout', errors: ['PAYMENT_NOT_FOUND', 'BRAND_DISABLED'] }),
    },
    startTransaction: {
      method: 'POST',
      path: '/payments/:payment_id/transactions',
      summary: 'Pay with a gateway',
      description: [
        'Starts paying on one gateway. The amount is converted into the gateway currency with the configured exchange rate (direct, else inverse, half-up) and checked against its limits.',
        'Manual gateway: give `gateway_trx_id` (and optionally `sender_number`); the transaction is `awaiting_verification` until the gateway SMS is matched or an admin verifies it.',
        'Automatic gateway: the transaction is `processing` and `redirect_url` is the gateway page to send the customer to.',
        'Refused, with nothing created, when the payment is expired (`PAYMENT_EXPIRED`, `Payment link has expired`), already has an open or completed transaction (`PAYMENT_ALREADY_STARTED`),',
        'the gateway is unknown or disabled (`GATEWAY_UNAVAILABLE`), no exchange rate exists (`CURRENCY_CONVERSION_FAILED`), the amount is outside the gateway limits',
        '(`AMOUNT_BELOW_MINIMUM`, `AMOUNT_EXCEEDS_MAXIMUM`), the gateway transaction id is claimed by another payment of the same merchant (`GATEWAY_TRX_ID_TAKEN`),',
        'or the brand is disabled (`BRAND_DISABLED`). An id claimed at another merchant is not refused (nor revealed): it waits for verification, and one gateway transaction still completes one payment only.',
        'After a few `GATEWAY_TRX_ID_TAKEN` answers for one payment, every further submission on it is `SUBMISSION_LIMIT_REACHED`.',
      ].join(' '),
      pathParams: paymentIdParams,
      body: startCheckoutTransactionBodySchema,
      responses: {
        201: ok(checkoutTransactionSchema),
      },
      metadata: meta({
        auth: 'checkout',
        tag: 'Checkout',
        errors: [
          'PAYMENT_NOT_FOUND',
          'PAYMENT_EXPIRED',
          'PAYMENT_ALREADY_STARTED',
          'INVALID_STATE',
          'GATEWAY_UNAVAILABLE',
          'AMOUNT_BELOW_MINIMUM',
          'AMOUNT_EXCEEDS_MAXIMUM',
          'CURRENCY_CONVERSION_FAILED',
          'GATEWAY_TRX_ID_TAKEN',
          'BRAND_DISABLED',
          'SUBMISSION_LIMIT_REACHED',
        ],
      }),
    },
    replaceSubmission: {
      method: 'PUT',
      path: '/payments/:payment_id/transaction/gateway-trx-id',
      summary: 'Change a mistyped gateway transaction id',
      description: [
        "While the payment's manual-gateway transaction is `awaiting_verification`, replaces its `gateway_trx_id` (and `sender_number`):",
        'the earlier id is released, the stored SMS are matched against the new one, and the change is audited.',
        'Same gateway and amount. At most a few times per payment (`gateway_trx_id_changes_left`), then `SUBMISSION_LIMIT_REACHED`.',
        'The same id again changes nothing. A completed payment is `PAYMENT_ALREADY_STARTED`, an expired one `PAYMENT_EXPIRED`,',
        'any other state (nothing submitted, failed, an automatic gateway) `INVALID_STATE`; `CONFLICT` when another change of the id happened at the same moment.',
      ].join(' '),
      pathParams: paymentIdParams,
      body: replaceCheckoutSubmissionBodySchema,
      responses: {
        200: ok(checkoutTransactionSchema),
      },
      metadata: meta({
        auth: 'checkout',
        tag: 'Checkout',
        errors: [
          'PAYMENT_NOT_FOUND',
          'BRAND_DISABLED',
          'PAYMENT_EXPIRED',
          'PAYMENT_ALREADY_STARTED',
          'INVALID_STATE',
          'CONFLICT',
          'GATEWAY_TRX_ID_TAKEN',
          'SUBMISSION_LIMIT_REACHED',
        ],
      }),
    },
    statusStream: {
      method: 'GET',
      path: '/payments/:payment_id/status-stream',
      summary: 'Follow the payment status (Server-Sent Events)',
      description: [
        'A `text/event-stream` (Server-Sent Events, for `EventSource`) telling the checkout page when the payment changes, instead of polling `GET /payments/{payment_id}`.',
        'On connect, and whenever the status changes (a submission awaiting verification, completed, failed, expired, canceled) or the check with the merchant\'s phone starts or ends, one `status` event whose `data` is JSON `{"status": ..., "terminal": ..., "checking_phone": ...}`:',
        '`status` as `GET /payments/{payment_id}` shows it, `terminal` true for `completed`, `expired` and `canceled`, after which the server ends the stream (a client stops there rather than reconnecting); `checking_phone` true while the transaction\'s `phone_check_until` is set.',
        'A comment line (`: heartbeat`) every few seconds keeps proxies from closing an idle stream. The stream also ends when the service shuts down; `EventSource` then reconnects after the `retry` the stream names.',
        'Same rules as `GET /payments/{payment_id}`: the payment id is the credential, an unknown or malformed id is `PAYMENT_NOT_FOUND`, a payment of a disabled brand `BRAND_DISABLED`.',
        'A few streams per payment and a bounded number per server process: past either, `RATE_LIMITED`.',
      ].join(' '),
      pathParams: paymentIdParams,
      responses: {
        200: c.otherResponse({
          contentType: 'text/event-stream',
          body: z.string().describe('Server-Sent Events: `retry: <ms>`, then `event: status` / `data: {"status":"awaiting_verification","terminal":false}` blocks and `: heartbeat` comment lines.'),
        }),
      },
      metadata: meta({ auth: 'checkout', tag: 'Checkout', errors: ['PAYMENT_NOT_FOUND', 'BRAND_DISABLED'] }),
    },
    cancel: {
      method: 'POST',
      path: '/payments/:payment_id/cancellations',
      summary: 'Cancel and return to the merchant',
      description:
        "Returns the merchant's cancel URL. Nothing is changed: like a hosted checkout session, the payment stays open until it expires, so a customer who comes back can still pay. " +
        'A completed payment cannot be cancelled (`PAYMENT_ALREADY_STARTED`).',
      pathParams: paymentIdParams,
      body: z.strictObject({}).optional(),
      responses: { 200: ok(checkoutCancellationSchema) },
      metadata: meta({ auth: 'checkout', tag: 'Checkout', errors: ['PAYMENT_NOT_FOUND', 'BRAND_DISABLED', 'PAYMENT_ALREADY_STARTED'] }),
    },
  },
  { pathPrefix: CHECKOUT_PATH_PREFIX, strictStatusCodes: true },
);

/** The `data` of a status stream's `status` event (JSON). */
export const checkoutStatusEventSchema = z
  .object({
    status: z.enum(paymentStatuses).describe('The status `GET /payments/{payment_id}` shows now.'),
    terminal: z.boolean().describe('True for `completed`, `expired` and `canceled`: nothing changes any more and the stream ends.'),
    checking_phone: z
      .boolean()
      .describe("True while the service is asking the merchant's phone for the SMS that proves the submitted id (the transaction's `phone_check_until` is set); an event comes when it turns false (the phone answered or did not answer in time)."),
  })
  .meta({ id: 'CheckoutStatusEvent' });

export type CheckoutStatusEvent = z.infer<typeof checkoutStatusEventSchema>;
export type CheckoutPayment = z.infer<typeof checkoutPaymentSchema>;
export type CheckoutGateway = z.infer<typeof checkoutGatewaySchema>;
export type CheckoutTransaction = z.infer<typeof checkoutTransactionSchema>;
