import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  amountInputSchema,
  dateQuery,
  okList,
  pageMetaWithPagesSchema,
  pageQuerySchema,
  amountSchema,
  currencySchema,
  livemodeSchema,
  meta,
  ok,
  timestampSchema,
  uuidSchema,
} from '../common/index.ts';
import { paymentStatuses } from '../vocabulary.ts';

const c = initContract();

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_BYTES = 8192;

/** Merchant-defined key/value pairs, returned as given. */
export const metadataSchema = z
  .record(
    z.string().min(1, 'Metadata keys must not be empty').max(40, 'Metadata keys are at most 40 characters'),
    z.union([z.string().max(500, 'Metadata string values are at most 500 characters'), z.number(), z.boolean(), z.null()]),
  )
  .refine((m) => Object.keys(m).length <= METADATA_MAX_KEYS, `Metadata has at most ${METADATA_MAX_KEYS} keys`)
  .refine((m) => new TextEncoder().encode(JSON.stringify(m)).length <= METADATA_MAX_BYTES, `Metadata is at most ${METADATA_MAX_BYTES} bytes as JSON`)
  .describe(`Your own key/value pairs (at most ${METADATA_MAX_KEYS} keys of up to 40 characters; values are strings of up to 500 characters, numbers, booleans or null). Returned as given. Do not put personal data here: it is stored as sent.`);

/** A success or cancel URL the customer is sent to (payments and payment links). */
export const redirectUrl = (what: string) =>
  z
    .url({ protocol: /^https?$/, error: 'Must be an absolute http(s) URL' })
    .max(2048, 'URLs are at most 2048 characters')
    .describe(what);

/** The customer paying; found by email or phone (keyed hashes) or created. */
export const paymentCustomerInputSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional().describe('Full name.'),
    email: z.string().max(254).optional().describe('Email address; trimmed and lower-cased before lookup.'),
    phone: z.string().max(32).optional().describe('Phone number, E.164 or national (Bangladesh by default).'),
  })
  .describe('At least one of `email` and `phone`. An existing customer of your brand with that email (or else phone) is reused; missing details are filled in, present ones are never overwritten.');

export const createPaymentBodySchema = z
  .strictObject({
    amount: amountInputSchema,
    currency: currencySchema,
    reference: z.string().trim().min(1).max(100).optional().describe('Your own reference (order number).'),
    customer: paymentCustomerInputSchema.optional(),
    metadata: metadataSchema.optional(),
    expires_in: z
      .number()
      .int('Must be a whole number of seconds')
      .min(60, 'Must be at least 60 seconds')
      .max(2_592_000, 'Must be at most 30 days (2592000 seconds)')
      .optional()
      .describe('Seconds until the payment link expires. Default: the `intent_expiry_minutes` setting (60 minutes).'),
    expires_at: timestampSchema.optional().describe('When the payment link expires (at least 60 seconds and at most 30 days ahead). Give this or `expires_in`, not both.'),
    success_url: redirectUrl(
      'Where the customer is sent after paying. The payment id rides along so your page can look the payment up: a `{PAYMENT_ID}` placeholder ' +
        'in the URL is replaced by it (`https://shop.example/thanks?pid={PAYMENT_ID}`); without a placeholder `payment_id=<id>` is appended to the query.',
    ).optional(),
    cancel_url: redirectUrl('Where the customer is sent on cancelling.').optional(),
  })
  .refine((b) => b.expires_in === undefined || b.expires_at === undefined, {
    message: 'Give expires_in or expires_at, not both',
    path: ['expires_at'],
  })
  .meta({ id: 'CreatePaymentRequest' });

/**
 * Identifiers a merchant meets on one payment (README.md, "Identifiers"):
 * `payment_id` names the payment for ever; `transaction_id` (and `id` in the
 * transaction form) the numeric record of its latest transaction; `trx_id` the
 * service's reference of that transaction; `gateway_trx_id` the wallet's.
 */
const PAYMENT_ID = "The payment's public id (UUID) from `POST /api/v1/payments`, also carried to your `success_url`. The one id to store on your order and to look the payment up, cancel or refund it with; it never changes, whatever happens to its transactions.";
const TRX_ID = "The service's reference of the latest transaction (for example `TRX9F8E7D6C5B4A3921`): shown to the customer on the checkout page, named in refunds (`trx_id`) and `payment.*` events. Quote it in support; a payment that is retried after a failure gets a new one.";
const GATEWAY_TRX_ID = "The reference the gateway gave the customer for the money sent (the TrxID of the wallet's confirmation SMS, entered by the customer on manual gateways); null until known. Use it to reconcile with the gateway's statement.";

/** The intent just created. */
export const paymentCreatedSchema = z
  .object({
    payment_id: uuidSchema.describe(PAYMENT_ID),
    checkout_url: z.string().describe('Hosted checkout page to send the customer to.'),
    status: z.literal('pending'),
    amount: amountSchema,
    currency: currencySchema,
    reference: z.string().nullable(),
    customer_id: uuidSchema.nullable().describe('UUID of the customer record, or null when no customer was given.'),
    metadata: z.record(z.string(), z.unknown()),
    success_url: z.string().nullable(),
    cancel_url: z.string().nullable(),
    expires_at: timestampSchema,
    created_at: timestampSchema,
    livemode: livemodeSchema,
  })
  .meta({ id: 'PaymentCreated' });

/** Fields both forms of a payment have, with the same meaning. */
const paymentCommon = {
  payment_id: uuidSchema.describe(PAYMENT_ID),
  currency: currencySchema.describe('Currency of `amount`.'),
  reference: z.string().nullable().describe('Your own reference (order number), as you gave it.'),
  requested_amount: amountSchema.describe('The amount you asked for when creating the payment, in `requested_currency`. It never changes.'),
  requested_currency: currencySchema.describe('The currency you asked for when creating the payment.'),
  created_at: timestampSchema,
  expires_at: timestampSchema.describe('When the payment link expires.'),
  customer: z
    .object({ name: z.string().nullable(), email: z.string().nullable() })
    .nullable()
    .describe('The customer (personal data in clear), or null.'),
  metadata: z.record(z.string(), z.unknown()),
  livemode: livemodeSchema,
};

/** The transaction form: a transaction exists for the payment and its latest one is shown. */
const paymentTransactionShape = {
  object: z.literal('transaction').describe('`transaction`: the customer started paying; this object shows the latest transaction of the payment. Tells the two forms apart.'),
  id: z.number().int().describe('Same value as `transaction_id` in this form (the record id of what the object shows). Prefer `transaction_id`, whose meaning does not depend on `object`.'),
  transaction_id: z.number().int().describe("Numeric id of the payment's latest transaction; refunds (`transaction_id`) and webhook deliveries name the transaction by it. Changes when the customer retries after a failure."),
  trx_id: z.string().nullable().describe(TRX_ID),
  gateway_trx_id: z.string().nullable().describe(GATEWAY_TRX_ID),
  amount: amountSchema.describe("Amount charged on the gateway, in the gateway's `currency` (converted from `requested_amount` when the currencies differ), without `fee`."),
  fee: amountSchema.nullable().describe('Gateway fee on `amount`.'),
  status: z.enum(paymentStatuses).describe('Status of the latest transaction; `canceled` once you canceled the payment.'),
  gateway: z.string().nullable().describe('Code of the gateway the customer chose.'),
  method: z.string().nullable().describe('Payment method of that gateway (for example `send_money`).'),
  exchange_rate: z.string().nullable().describe('Gateway currency units per requested currency unit used for the conversion, or null without one.'),
  failure_reason: z.string().nullable().describe('Why the transaction failed, or null.'),
  completed_at: timestampSchema.nullable(),
};

/** The intent form: nobody started paying yet; no transaction exists. */
const paymentIntentShape = {
  object: z.literal('payment_intent').describe('`payment_intent`: nobody started paying yet, so no transaction exists and every transaction field is null. Tells the two forms apart.'),
  id: z.number().int().describe('The numeric record id of the payment intent (not a transaction id). Refer to the payment by `payment_id` instead.'),
  transaction_id: z.null().describe('Null: no transaction exists yet.'),
  trx_id: z.null().describe('Null: no transaction exists yet.'),
  gateway_trx_id: z.null().describe('Null: no transaction exists yet.'),
  amount: amountSchema.describe('The amount asked for, the same as `requested_amount` (nothing is converted or charged yet).'),
  fee: z.null(),
  status: z.enum(['pending', 'expired', 'canceled']).describe('`pending` (payable), `expired`, or `canceled` by you.'),
  gateway: z.null(),
  method: z.null(),
  exchange_rate: z.null(),
  failure_reason: z.null(),
  completed_at: z.null(),
};

const paymentTransactionSchema = z.object({ ...paymentTransactionShape, ...paymentCommon }).meta({ id: 'PaymentTransaction' });
const paymentIntentSchema = z.object({ ...paymentIntentShape, ...paymentCommon }).meta({ id: 'PaymentIntent' });

/**
 * A payment as the lookup shows it: its latest transaction when one exists
 * (`object: "transaction"`), else the intent itself (`object: "payment_intent"`),
 * with the same field names; `object` tells them apart.
 */
export const paymentSchema = z
  .discriminatedUnion('object', [paymentTransactionSchema, paymentIntentSchema])
  .describe('The latest transaction of the payment (`object: "transaction"`) or, before the customer starts paying, the intent (`object: "payment_intent"`). Switch on `object`.')
  .meta({ id: 'Payment' });

export type PaymentResource = z.infer<typeof paymentSchema>;

const maskedCustomer = z
  .object({
    name: z.string().nullable(),
    email_masked: z.string().nullable().describe('Masked email, e.g. `j***@example.com`.'),
    phone_masked: z.string().nullable().describe('Masked phone, e.g. `+88017*****678`.'),
  })
  .nullable()
  .describe('The customer with masked email and phone (as the customer list shows it), or null.');

/** A payment in a list: like `Payment`, with the customer's contact details masked. */
export const paymentListItemSchema = z
  .discriminatedUnion('object', [
    paymentTransactionSchema.omit({ customer: true }).extend({ customer: maskedCustomer }).meta({ id: 'PaymentListItemTransaction' }),
    paymentIntentSchema.omit({ customer: true }).extend({ customer: maskedCustomer }).meta({ id: 'PaymentListItemIntent' }),
  ])
  .describe('A payment as `GET /api/v1/payments/{payment_id}` shows it, with the customer\'s email and phone masked. Switch on `object`.')
  .meta({ id: 'PaymentListItem' });

export type PaymentListItemResource = z.infer<typeof paymentListItemSchema>;

export const paymentListQuerySchema = z
  .strictObject({
    ...pageQuerySchema.shape,
    status: z.enum(paymentStatuses).optional().describe('Only payments in this status (the status `GET /api/v1/payments/{payment_id}` shows).'),
    gateway: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,49}$/, 'Must be a gateway code (lower-case letters, digits, _ or -)')
      .optional()
      .describe("Only payments whose latest transaction is on this gateway (its code)."),
    reference: z.string().min(1).max(100).optional().describe('Only payments with exactly this reference of yours.'),
    customer_email: z
      .string()
      .min(3)
      .max(254)
      .optional()
      .describe("Only payments of the customer with this email (matched on the normalised address's keyed hash; nothing is decrypted to search)."),
    customer_phone: z.string().min(3).max(32).optional().describe('Only payments of the customer with this phone number (E.164 or national; keyed hash).'),
    from: dateQuery('Created on or after this UTC date (YYYY-MM-DD, inclusive).').optional(),
    to: dateQuery('Created on or before this UTC date (YYYY-MM-DD, inclusive).').optional(),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'Must not be before `from`', path: ['to'] });
export type PaymentCreatedResource = z.infer<typeof paymentCreatedSchema>;

export const paymentsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/payments',
      summary: 'Create a payment',
      description:
        'Creates a payment intent and returns its `payment_id` and `checkout_url`. Amounts are decimal strings with two places. ' +
        'Refused when no enabled gateway could ever take the amount (`Amount exceeds maximum`). Honours `Idempotency-Key`.',
      body: createPaymentBodySchema,
      responses: { 201: ok(paymentCreatedSchema) },
      metadata: meta({
        auth: 'merchant',
        tag: 'Payments',
        idempotent: true,
        errors: ['AMOUNT_EXCEEDS_MAXIMUM', 'AMOUNT_BELOW_MINIMUM', 'CURRENCY_NOT_SUPPORTED', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS'],
      }),
    },
    list: {
      method: 'GET',
      path: '/payments',
      summary: 'List and search payments',
      description:
        'Payments of the calling brand in the key\'s mode, newest first, each as `GET /api/v1/payments/{payment_id}` shows it but with the customer\'s ' +
        'email and phone masked. Filters combine (AND). Out-of-range or malformed filters are a 400 naming the parameter.',
      query: paymentListQuerySchema,
      responses: { 200: okList(paymentListItemSchema, pageMetaWithPagesSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Payments' }),
    },
    cancel: {
      method: 'POST',
      path: '/payments/:payment_id/cancel',
      summary: 'Cancel a payment',
      description:
        'Cancels an open payment: its checkout link stops taking payments, a `pending` transaction (the customer chose a gateway but reported no payment) ' +
        'fails, and `payment.canceled` is sent. Canceling a canceled payment answers the same payment again and sends nothing. ' +
        '`PAYMENT_NOT_CANCELABLE` once the customer has reported paying (`awaiting_verification`: money may already have moved; an operator verifies or rejects it), ' +
        'while an automatic gateway is `processing`, and for `completed` or `expired` payments. Honours `Idempotency-Key`.',
      pathParams: z.object({ payment_id: z.string().describe('The payment id (UUID) returned when the payment was created.') }),
      body: z.strictObject({}).optional(),
      responses: { 200: ok(paymentSchema) },
      metadata: meta({
        auth: 'merchant',
        tag: 'Payments',
        idempotent: true,
        errors: ['PAYMENT_NOT_FOUND', 'PAYMENT_NOT_CANCELABLE', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS'],
      }),
    },
    get: {
      method: 'GET',
      path: '/payments/:payment_id',
      summary: 'Get a payment',
      description:
        "The payment's latest transaction when one exists, else the intent. `PAYMENT_NOT_FOUND` for an unknown id, another brand's payment, a payment of the other mode (a test key sees only test payments, a live key only live ones) or a malformed id.",
      pathParams: z.object({ payment_id: z.string().describe('The payment id (UUID) returned when the payment was created.') }),
      responses: { 200: ok(paymentSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Payments', errors: ['PAYMENT_NOT_FOUND'] }),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
