import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  apiSurfaceCodes,
  currencySchema,
  dateQuery,
  intQuery,
  MAX_AMOUNT_INTEGER_DIGITS,
  AMOUNT_POSITIVE_MESSAGE,
  AMOUNT_MAXIMUM_MESSAGE,
  amountSchema,
  meta,
  ok,
  okList,
  pageMetaWithPagesSchema,
  timestampSchema,
  uuidSchema,
  withErrorResponses,
} from '../common/index.ts';
import { METADATA_MAX_BYTES, METADATA_MAX_KEYS } from '../merchant/payments.ts';
import { refundSchema } from '../merchant/refunds.ts';
import { transactionStatuses } from '../vocabulary.ts';

const c = initContract();

/**
 * The OwnPay dialect of the merchant API: the routes and shapes OwnPay's
 * WooCommerce and WHMCS plugins and its Node and Laravel SDKs call, answered
 * for `op_live_…`/`op_test_…` keys only (README "Coming from OwnPay"). The
 * same services serve them as the native routes: auth, brand scope, modes,
 * idempotency, rate limits and the error envelope are the native ones; only
 * the request and response shapes differ. Request bodies here ignore members
 * they do not know (OwnPay's plugins send more than they document); the native
 * routes never do.
 */

export const OWNPAY_AMOUNT_MESSAGE = 'Amount must be a positive number with at most two decimal places, e.g. "500", "500.5" or "500.00"';

/**
 * OwnPay's amounts: a positive decimal with at most two places, as a string or
 * a JSON number (their Node SDK sends `String(amount)`, PHP plugins a string);
 * normalised to our two-decimal string. A JSON number is read from its
 * shortest decimal form, so `500.5` is `"500.50"`; `500.555` is refused, never rounded.
 */
export const ownpayAmountSchema = z
  .union([z.string(), z.number()], { error: (issue) => (issue.input === undefined ? 'Amount is required' : OWNPAY_AMOUNT_MESSAGE) })
  .transform((v) => (typeof v === 'number' ? String(v) : v.trim()))
  .pipe(
    z
      .string()
      .regex(/^-?[0-9]+(?:\.[0-9]{1,2})?$/, { message: OWNPAY_AMOUNT_MESSAGE, abort: true })
      .refine((s) => !s.startsWith('-') && /[1-9]/.test(s), AMOUNT_POSITIVE_MESSAGE)
      .refine((s) => s.replace(/^0+(?=\d)/, '').split('.')[0]!.length <= MAX_AMOUNT_INTEGER_DIGITS, AMOUNT_MAXIMUM_MESSAGE)
      .transform((s) => {
        const [whole, frac = ''] = s.split('.');
        return `${whole!.replace(/^0+(?=\d)/, '')}.${frac.padEnd(2, '0')}`;
      }),
  )
  .describe('Positive amount with at most two decimals, as a string (`"500"`, `"500.5"`, `"500.00"`) or a number; stored as `"500.00"`.');

const urlField = (what: string) =>
  z
    .url({ protocol: /^https?$/, error: 'Must be an absolute http(s) URL' })
    .max(1900, 'URLs are at most 1900 characters')
    .describe(what);

const ownpayMetadataSchema = z
  .record(z.string().min(1).max(40), z.unknown())
  .refine((m) => Object.keys(m).length <= METADATA_MAX_KEYS, `Metadata has at most ${METADATA_MAX_KEYS} keys`)
  .refine((m) => new TextEncoder().encode(JSON.stringify(m)).length <= METADATA_MAX_BYTES, `Metadata is at most ${METADATA_MAX_BYTES} bytes as JSON`)
  .describe('Your key/value pairs (any JSON values, at most 50 keys and 8 KB), returned in lookups and webhooks as given. No personal data here: it is stored as sent.');

/** `POST /api/v1/payments` in OwnPay's flat shape. */
export const ownpayCreatePaymentBodySchema = z
  .looseObject({
    amount: ownpayAmountSchema,
    currency: z
      .string()
      .transform((s) => s.trim().toUpperCase())
      .pipe(currencySchema),
    callback_url: urlField(
      "Where this payment's webhooks go: delivered only when it is the URL of one of the brand's registered webhook endpoints (signed with that endpoint's secret); otherwise nothing is sent there and the event records why.",
    ).optional(),
    redirect_url: urlField('Where the customer is sent after paying, with `payment_id` and `status=completed` added to its query.').optional(),
    cancel_url: urlField('Where the customer is sent on cancelling, with `status=cancelled` added to its query.').optional(),
    customer_name: z.string().trim().max(200).optional(),
    customer_email: z.string().trim().max(254).optional(),
    customer_mail: z.string().trim().max(254).optional().describe('The older spelling of `customer_email` (the WooCommerce plugin sends it).'),
    customer_phone: z.string().trim().max(32).optional(),
    reference: z
      .union([z.string(), z.number().int()])
      .transform((v) => String(v).trim())
      .pipe(z.string().min(1).max(100))
      .optional(),
    metadata: ownpayMetadataSchema.optional(),
    logo_url: z.string().max(2048).optional().describe('Accepted and ignored: the checkout shows the brand as configured.'),
    gateway: z.string().max(50).optional().describe('Accepted and ignored: the customer picks the gateway on the checkout page.'),
  })
  .meta({ id: 'OwnPayCreatePaymentRequest' });

export const ownpayPaymentCreatedSchema = z
  .object({
    payment_id: uuidSchema,
    token: z.string().describe('The payment id again: the checkout needs no separate token.'),
    checkout_url: z.string(),
    status: z.literal('pending'),
    amount: amountSchema,
    currency: currencySchema,
    reference: z.string().nullable(),
    expires_at: timestampSchema,
    livemode: z.boolean(),
  })
  .meta({ id: 'OwnPayPaymentCreated' });

/** OwnPay statuses: ours, with `canceled` spelled `cancelled`. */
export const ownpayPaymentStatuses = ['pending', 'processing', 'awaiting_verification', 'completed', 'failed', 'expired', 'cancelled'] as const;

/** Our status in OwnPay's spelling (`canceled` → `cancelled`; the rest are the same), for answers and webhook bodies. */
export const toOwnpayStatus = <S>(status: S): S | 'cancelled' => (status === 'canceled' ? 'cancelled' : status);

export const ownpayPaymentSchema = z
  .object({
    id: z.number().int().nullable().describe('Numeric id of the latest transaction, or null before the customer starts paying.'),
    payment_id: uuidSchema,
    trx_id: z.string().nullable(),
    gateway_trx_id: z.string().nullable(),
    amount: amountSchema.describe('The amount asked for (what the plugins compare with the order).'),
    currency: currencySchema.describe('The currency asked for.'),
    charged_amount: amountSchema.describe('Amount charged on the gateway, in `charged_currency`.'),
    charged_currency: currencySchema,
    fee: amountSchema.describe('Gateway fee; `0.00` before a transaction exists.'),
    status: z.enum(ownpayPaymentStatuses),
    gateway: z.string().nullable(),
    method: z.string().nullable(),
    reference: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    created_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
    customer: z.object({ name: z.string().nullable(), email: z.string().nullable() }).nullable(),
    livemode: z.boolean(),
  })
  .meta({ id: 'OwnPayPayment' });

export const ownpayTransactionSchema = z
  .object({
    id: z.number().int(),
    trx_id: z.string(),
    payment_id: uuidSchema,
    gateway_trx_id: z.string().nullable(),
    amount: amountSchema.describe('Amount charged on the gateway.'),
    currency: currencySchema,
    fee: amountSchema,
    net_amount: amountSchema.nullable().describe('`amount` minus `fee`.'),
    status: z.enum(transactionStatuses),
    gateway: z.string().nullable(),
    method: z.string().nullable(),
    reference: z.string().nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema.nullable().describe('When it completed, or null.'),
  })
  .meta({ id: 'OwnPayTransaction' });

export const ownpayTransactionListQuerySchema = z
  .object({
    page: intQuery({ min: 1, description: 'Page number, starting at 1. Default 1.' }).optional().default(1),
    per_page: intQuery({ min: 1, max: 100, description: 'Records per page, 1 to 100. Default 25 (as OwnPay).' }).optional().default(25),
    status: z.enum(transactionStatuses).optional(),
    gateway: z.string().min(1).max(50).optional().describe('Gateway code.'),
    from: dateQuery('Created on or after this UTC date (YYYY-MM-DD, inclusive).').optional(),
    to: dateQuery('Created on or before this UTC date (YYYY-MM-DD, inclusive).').optional(),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'Must not be before `from`', path: ['to'] });

export const ownpayCreateCustomerBodySchema = z
  .looseObject({
    name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(200),
    email: z.string().trim().max(254).optional(),
    phone: z.string().trim().max(32).optional(),
  })
  .meta({ id: 'OwnPayCreateCustomerRequest' });

const idOrReference = z.union([z.string().trim().min(1).max(100), z.number().int().positive()]);

export const ownpayCreateRefundBodySchema = z
  .looseObject({
    trx_id: idOrReference.optional().describe('Service (or gateway) reference of a completed transaction.'),
    transaction_id: idOrReference
      .optional()
      .describe('Alias of `trx_id` (OwnPay\'s SDKs send this name): a string is a transaction reference, a whole number the numeric transaction id.'),
    amount: ownpayAmountSchema,
    reason: z.string().trim().max(500).optional(),
  })
  .refine((b) => b.trx_id !== undefined || b.transaction_id !== undefined, { message: 'Give trx_id or transaction_id', path: ['trx_id'] })
  .meta({ id: 'OwnPayCreateRefundRequest' });

export const ownpayHealthSchema = z
  .object({
    status: z.literal('healthy'),
    version: z.string(),
    db: z.literal('connected'),
    mobile: z.object({
      connected: z.boolean().describe("True when one of the brand's active devices of this mode sent a heartbeat in the last 10 minutes."),
      active_devices: z.number().int(),
    }),
    gateways: z.number().int().describe('Enabled gateways.'),
    customers: z.number().int().describe("The brand's customers in this mode."),
    time: timestampSchema,
  })
  .meta({ id: 'OwnPayHealth' });

const pathPaymentId = z.object({ payment_id: z.string().describe('The payment id (UUID).') });

export const ownpayContract = withErrorResponses(
  c.router(
    {
      health: {
        method: 'GET',
        path: '/health',
        summary: 'Health (OwnPay dialect)',
        description: 'What OwnPay\'s SDKs read from `GET /api/v1/health`: the service answered, the database is reachable, and the brand\'s devices, gateways and customers.',
        responses: { 200: ok(ownpayHealthSchema) },
        metadata: meta({ auth: 'merchant', tag: 'OwnPay dialect' }),
      },
      createPayment: {
        method: 'POST',
        path: '/payments',
        summary: 'Create a payment (OwnPay dialect)',
        description:
          'OwnPay\'s flat create-payment body; answers 201 with `payment_id` and `checkout_url`. Same rules as the native create (gateways that could take the amount, expiry, customer found or created by email or phone). Honours `Idempotency-Key`.',
        body: ownpayCreatePaymentBodySchema,
        responses: { 201: ok(ownpayPaymentCreatedSchema) },
        metadata: meta({
          auth: 'merchant',
          tag: 'OwnPay dialect',
          idempotent: true,
          errors: ['AMOUNT_EXCEEDS_MAXIMUM', 'AMOUNT_BELOW_MINIMUM', 'CURRENCY_NOT_SUPPORTED', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS'],
        }),
      },
      getPayment: {
        method: 'GET',
        path: '/payments/:payment_id',
        summary: 'Get a payment (OwnPay dialect)',
        description: 'The payment with the intent\'s `amount` and `currency` (what the plugins compare with the order) and OwnPay\'s `cancelled` spelling.',
        pathParams: pathPaymentId,
        responses: { 200: ok(ownpayPaymentSchema) },
        metadata: meta({ auth: 'merchant', tag: 'OwnPay dialect', errors: ['PAYMENT_NOT_FOUND'] }),
      },
      listTransactions: {
        method: 'GET',
        path: '/transactions',
        summary: 'List transactions (OwnPay dialect)',
        description: 'The brand\'s transactions in the key\'s mode, newest first, with `meta` paging (`page`, `per_page`, `total`, `total_pages`).',
        query: ownpayTransactionListQuerySchema,
        responses: { 200: okList(ownpayTransactionSchema, pageMetaWithPagesSchema) },
        metadata: meta({ auth: 'merchant', tag: 'OwnPay dialect' }),
      },
      getTransaction: {
        method: 'GET',
        path: '/transactions/:trx_id',
        summary: 'Get a transaction (OwnPay dialect)',
        description: 'By the service\'s transaction reference, else by the gateway\'s (case-insensitive).',
        pathParams: z.object({ trx_id: z.string().min(1).max(100).describe('Transaction reference (service or gateway).') }),
        responses: { 200: ok(ownpayTransactionSchema) },
        metadata: meta({ auth: 'merchant', tag: 'OwnPay dialect', errors: ['TRANSACTION_NOT_FOUND'] }),
      },
      createCustomer: {
        method: 'POST',
        path: '/customers',
        summary: 'Create a customer (OwnPay dialect)',
        description: 'Creates a customer (an email or a phone is needed to find them again); `CONFLICT` (409) when the brand already has one with that email (or phone) in this mode. Honours `Idempotency-Key`.',
        body: ownpayCreateCustomerBodySchema,
        responses: { 201: ok(z.object({ id: z.number().int(), uuid: uuidSchema }).meta({ id: 'OwnPayCustomerCreated' })) },
        metadata: meta({ auth: 'merchant', tag: 'OwnPay dialect', idempotent: true, errors: ['CONFLICT', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS'] }),
      },
      createRefund: {
        method: 'POST',
        path: '/refunds',
        summary: 'Refund a transaction (OwnPay dialect)',
        description: 'As the native refund, naming the transaction by `trx_id` or its alias `transaction_id`; amounts as OwnPay writes them. Honours `Idempotency-Key`.',
        body: ownpayCreateRefundBodySchema,
        responses: { 201: ok(refundSchema) },
        metadata: meta({
          auth: 'merchant',
          tag: 'OwnPay dialect',
          scope: 'refunds',
          idempotent: true,
          errors: ['PAYMENT_NOT_FOUND', 'TRANSACTION_NOT_REFUNDABLE', 'REFUND_EXCEEDS_AVAILABLE', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS'],
        }),
      },
    },
    { pathPrefix: '/api/v1', strictStatusCodes: true },
  ),
  apiSurfaceCodes,
);

export type OwnPayContract = typeof ownpayContract;
