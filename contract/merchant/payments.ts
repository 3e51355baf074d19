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

/** The intent just created. */
export const paymentCreatedSchema = z
  .object({
    payment_id: uuidSchema.describe('The payment id: use it with `GET /api/v1/payments/{payment_id}`.'),
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

/**
 * A payment: its latest transaction when one exists, else the intent itself.
 * In the intent form (`object: "payment_intent"`), `trx_id`, `gateway_trx_id`,
 * `gateway`, `method`, `fee` and `completed_at` are null.
 */
export const paymentSchema = z
  .object({
    object: z
      .enum(['transaction', 'payment_intent'])
      .describe('`transaction` when a transaction exists for the intent (its latest is shown), else `payment_intent`.'),
    id: z.number().int().describe('Transaction record id (intent record id in the intent form).'),
    payment_id: uuidSchema,
    transaction_id: z.number().int().nullable().describe('Transaction record id, or null in the intent form.'),
    trx_id: z.string().nullable().describe('Service transaction reference.'),
    gateway_trx_id: z.string().nullable().describe("The gateway's transaction reference, once known."),
    amount: amountSchema.describe('Amount charged on the gateway (after currency conversion); the intent amount in the intent form.'),
    currency: currencySchema,
    fee: amountSchema.nullable().describe('Gateway fee on `amount`.'),
    status: z.enum(paymentStatuses).describe('Transaction status, or `pending`/`expired` in the intent form; `canceled` once you canceled the payment.'),
    gateway: z.string().nullable().describe('Gateway code.'),
    method: z.string().nullable().describe('Payment method of the gateway.'),
    reference: z.string().nullable().describe('Your own reference.'),
    requested_amount: amountSchema.describe('The intent amount, in the intent currency.'),
    requested_currency: currencySchema,
    exchange_rate: z.string().nullable().describe('Gateway currency units per intent currency unit used for the conversion, or null.'),
    failure_reason: z.string().nullable(),
    created_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
    expires_at: timestampSchema.describe('When the payment link expires.'),
    customer: z
      .object({ name: z.string().nullable(), email: z.string().nullable() })
      .nullable()
      .describe('The customer (personal data in clear), or null.'),
    metadata: z.record(z.string(), z.unknown()),
    livemode: livemodeSchema,
  })
  .meta({ id: 'Payment' });

export type PaymentResource = z.infer<typeof paymentSchema>;

/** A payment in a list: like `Payment`, with the customer's contact details masked. */
export const paymentListItemSchema = paymentSchema
  .omit({ customer: true })
  .extend({
    customer: z
      .object({
        name: z.string().nullable(),
        email_masked: z.string().nullable().describe('Masked email, e.g. `j***@example.com`.'),
        phone_masked: z.string().nullable().describe('Masked phone, e.g. `+88017*****678`.'),
      })
      .nullable()
      .describe('The customer with masked email and phone (as the customer list shows it), or null.'),
  })
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
