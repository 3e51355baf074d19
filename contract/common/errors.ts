/**
 * The one registry of error codes: every code the service can answer with, its
 * HTTP status and its default message. Services throw `AppError(code)`; only the
 * HTTP error handler turns a code into a status. The OpenAPI generator lists each
 * route's codes from this table, so a code missing here is a compile error
 * everywhere it is used.
 */
export const errorCodes = [
  'VALIDATION_ERROR',
  'MALFORMED_JSON',
  'UNAUTHORIZED',
  'INVALID_PAIRING_CODE',
  'FORBIDDEN',
  'INSUFFICIENT_SCOPE',
  'INVALID_CREDENTIALS',
  'TOTP_REQUIRED',
  'CSRF_TOKEN_INVALID',
  'ACCOUNT_LOCKED',
  'NOT_FOUND',
  'OPERATOR_NOT_FOUND',
  'PAYMENT_NOT_FOUND',
  'PAYMENT_LINK_NOT_FOUND',
  'INVOICE_NOT_FOUND',
  'REFUND_NOT_FOUND',
  'CUSTOMER_NOT_FOUND',
  'TRANSACTION_NOT_FOUND',
  'BRAND_NOT_FOUND',
  'API_KEY_NOT_FOUND',
  'GATEWAY_NOT_FOUND',
  'DEVICE_NOT_FOUND',
  'DEVICE_REVOKED',
  'WALLET_ACCOUNT_NOT_FOUND',
  'SMS_RECORD_NOT_FOUND',
  'SMS_QUEUE_ITEM_NOT_FOUND',
  'WEBHOOK_ENDPOINT_NOT_FOUND',
  'DELIVERY_NOT_FOUND',
  'EXCHANGE_RATE_NOT_FOUND',
  'RECONCILIATION_NOT_FOUND',
  'STATEMENT_UNREADABLE',
  'STATEMENT_UNKNOWN_COLUMNS',
  'STATEMENT_ROWS_INVALID',
  'STATEMENT_DAY_IN_FUTURE',
  'CONFLICT',
  'CUSTOMER_EMAIL_TAKEN',
  'CUSTOMER_PHONE_TAKEN',
  'CUSTOMER_IMPORT_TOO_LARGE',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_REQUEST_IN_PROGRESS',
  'INVALID_STATE',
  'OPERATOR_EMAIL_TAKEN',
  'LAST_OWNER',
  'PAYMENT_ALREADY_STARTED',
  'INVOICE_NOT_DRAFT',
  'INVOICE_VOID',
  'INVOICE_ALREADY_PAID',
  'PAYMENT_NOT_CANCELABLE',
  'GATEWAY_TRX_ID_TAKEN',
  'BRAND_DISABLED',
  'SUBMISSION_LIMIT_REACHED',
  'SMS_EVIDENCE_MISMATCH',
  'TEMPLATE_REGRESSION',
  'TRANSACTION_NOT_REFUNDABLE',
  'REFUND_EXCEEDS_AVAILABLE',
  'PAYMENT_EXPIRED',
  'PAYLOAD_TOO_LARGE',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'UNSUPPORTED_MEDIA_TYPE',
  'BRAND_LOGO_TOO_LARGE',
  'BRAND_LOGO_UNSUPPORTED_TYPE',
  'BRAND_LOGO_BAD_DIMENSIONS',
  'INVALID_BRAND_COLOR',
  'AMOUNT_EXCEEDS_MAXIMUM',
  'AMOUNT_BELOW_MINIMUM',
  'CURRENCY_NOT_SUPPORTED',
  'CURRENCY_CONVERSION_FAILED',
  'GATEWAY_UNAVAILABLE',
  'INVALID_SMS_TEMPLATE',
  'WEBHOOK_URL_NOT_ALLOWED',
  'WEBHOOK_ENDPOINT_LIMIT_REACHED',
  'INVALID_SIGNATURE',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export type HttpErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 410 | 413 | 415 | 422 | 429 | 431 | 500 | 503;

export interface ErrorDefinition {
  status: HttpErrorStatus;
  /** Default human-readable message; a service may give a more precise one. */
  message: string;
  /** When the code happens; becomes the OpenAPI description. */
  description: string;
}

export const errorRegistry = {
  VALIDATION_ERROR: {
    status: 400,
    message: 'Request validation failed',
    description: 'A path, query, header or body value is missing or malformed. One `errors` item per bad value, with `field` naming it (for example `per_page` or `customer.email`).',
  },
  MALFORMED_JSON: {
    status: 400,
    message: 'Request body is not valid JSON',
    description: 'The body was sent as `application/json` but could not be parsed.',
  },
  UNAUTHORIZED: {
    status: 401,
    message: 'Missing or invalid credentials',
    description: 'The `Authorization: Bearer` credential is missing, malformed, unknown, expired or revoked.',
  },
  INVALID_PAIRING_CODE: {
    status: 401,
    message: 'Invalid pairing code',
    description: 'Device pairing or token refresh was rejected: unknown, used or expired pairing code; expired, malformed, reused or revoked refresh token; fingerprint mismatch.',
  },
  INSUFFICIENT_SCOPE: {
    status: 403,
    message: 'This API key lacks the scope this operation needs',
    description: 'The API key is valid but was created without the scope this operation needs (`read`, `write`, `refunds` or `webhooks`); the message names it. Use a key with that scope.',
  },
  FORBIDDEN: {
    status: 403,
    message: 'Not allowed',
    description: 'The credential is valid but may not perform this operation.',
  },
  INVALID_CREDENTIALS: {
    status: 401,
    message: 'Wrong e-mail, password or code',
    description: 'Console login (or a password/TOTP change) was refused: unknown e-mail, wrong password, wrong TOTP code, or a disabled operator. The answer is the same for each, so it does not tell which e-mails are operators.',
  },
  TOTP_REQUIRED: {
    status: 401,
    message: 'A TOTP code is required',
    description: 'The e-mail and password are right but the operator has two-factor authentication on: send `totp_code` with them.',
  },
  CSRF_TOKEN_INVALID: {
    status: 403,
    message: 'Missing or wrong CSRF token',
    description: 'A console request other than GET/HEAD authenticated by the session cookie lacks the `X-CSRF-Token` header, or it is not the session\'s token. Nothing was changed.',
  },
  ACCOUNT_LOCKED: {
    status: 429,
    message: 'Too many failed logins: the account is locked for a while',
    description: 'Five failed logins for one operator within 15 minutes lock it for 15 minutes; `Retry-After` says how long. Refused even with the right password.',
  },
  NOT_FOUND: {
    status: 404,
    message: 'Route not found',
    description: 'No route matches the method and path.',
  },
  INVOICE_NOT_FOUND: {
    status: 404,
    message: 'Invoice not found',
    description: "No invoice with this id exists for the calling brand and mode (another brand's invoice, or one of the other mode, is not found either). On the hosted page: an unknown token or a draft.",
  },
  PAYMENT_LINK_NOT_FOUND: { status: 404, message: 'Payment link not found', description: 'No payment link with this id exists for the calling brand and mode.' },
  PAYMENT_NOT_FOUND: {
    status: 404,
    message: 'Payment not found',
    description: 'No payment (intent or transaction) with this id or reference exists for the calling brand.',
  },
  REFUND_NOT_FOUND: {
    status: 404,
    message: 'Refund not found',
    description: 'The transaction exists but has no refund.',
  },
  CUSTOMER_NOT_FOUND: {
    status: 404,
    message: 'Customer not found',
    description: 'No customer of the calling brand (in this mode) has this email, phone number or id; a deleted customer is not found either.',
  },
  OPERATOR_NOT_FOUND: {
    status: 404,
    message: 'Operator not found',
    description: 'No console operator has this id.',
  },
  TRANSACTION_NOT_FOUND: {
    status: 404,
    message: 'Transaction not found',
    description: 'No transaction with this id exists.',
  },
  BRAND_NOT_FOUND: { status: 404, message: 'Brand not found', description: 'No brand with this id exists.' },
  /** A checkout logo over the size limit (64 KB, decoded). */
  BRAND_LOGO_TOO_LARGE: {
    status: 413,
    message: 'The logo is too large',
    description: 'The decoded logo is over 64 KB (65536 bytes). Nothing is stored; the previous logo stays.',
  },
  /** A checkout logo that is not PNG, JPEG or WebP by its own first bytes (SVG included). */
  BRAND_LOGO_UNSUPPORTED_TYPE: {
    status: 415,
    message: 'The logo must be a PNG, JPEG or WebP image',
    description: 'The file is not a PNG, JPEG or WebP image, judged by its first bytes (not its name). SVG is refused: it can carry script. Nothing is stored.',
  },
  /** A checkout logo whose width or height is outside 16–2048 px. */
  BRAND_LOGO_BAD_DIMENSIONS: {
    status: 422,
    message: 'The logo has unusable dimensions',
    description: 'Each side of the logo must be 16 to 2048 pixels. Nothing is stored.',
  },
  /** A brand colour that is not `#rrggbb`. */
  INVALID_BRAND_COLOR: {
    status: 400,
    message: 'The colour must be a hex colour like #1f5eff',
    description: '`primary_color` must be `#` and six hex digits (or null to use the default). The checkout picks white or dark text on it by WCAG contrast.',
  },
  API_KEY_NOT_FOUND: { status: 404, message: 'API key not found', description: 'No API key with this id exists for the brand.' },
  GATEWAY_NOT_FOUND: { status: 404, message: 'Gateway not found', description: 'No gateway with this code or id exists.' },
  DEVICE_NOT_FOUND: { status: 404, message: 'Device not found', description: 'No device with this id exists.' },
  DEVICE_REVOKED: {
    status: 409,
    message: 'The device is revoked',
    description: 'The device was revoked (by an operator, a re-pairing or a reused refresh token): nothing it holds or is said to have received counts as evidence any more, so an SMS pasted for it is refused.',
  },
  WALLET_ACCOUNT_NOT_FOUND: { status: 404, message: 'Wallet account not found', description: 'No wallet account with this id exists for the brand.' },
  SMS_RECORD_NOT_FOUND: { status: 404, message: 'SMS record not found', description: 'No forwarded SMS record with this id exists.' },
  SMS_QUEUE_ITEM_NOT_FOUND: {
    status: 404,
    message: 'Outbound SMS not found',
    description: "No outbound SMS with this id is leased to the calling device.",
  },
  WEBHOOK_ENDPOINT_NOT_FOUND: {
    status: 404,
    message: 'Webhook endpoint not found',
    description: 'No webhook endpoint of the brand with this id exists for the calling key\'s mode, or (singular routes) the brand has no webhook endpoint yet.',
  },
  DELIVERY_NOT_FOUND: { status: 404, message: 'Webhook delivery not found', description: 'No webhook delivery with this id exists.' },
  EXCHANGE_RATE_NOT_FOUND: { status: 404, message: 'Exchange rate not found', description: 'No exchange rate for this currency pair.' },
  RECONCILIATION_NOT_FOUND: {
    status: 404,
    message: 'Reconciliation report not found',
    description: 'No statement upload with this id exists, or it belongs to a brand outside the operator\'s brand scope.',
  },
  STATEMENT_UNREADABLE: {
    status: 422,
    message: 'The file is not a readable statement',
    description:
      'The uploaded statement is not CSV or tab-separated text (a PDF, a spreadsheet, another binary file), has a broken quote, or holds no transaction row. Export the statement as CSV or text (docs/reconciliation.md). Nothing was stored.',
  },
  STATEMENT_UNKNOWN_COLUMNS: {
    status: 422,
    message: 'The statement has no known column layout',
    description:
      'No row among the first 20 names the columns of a known layout: a bKash statement, a Nagad statement, or the generic layout (`date_time`, `trx_id`, `direction`, `amount`, ...). The message lists the columns found; rename them to the generic layout (docs/reconciliation.md). Nothing was stored.',
  },
  STATEMENT_ROWS_INVALID: {
    status: 422,
    message: 'Some rows of the statement cannot be read',
    description:
      'One or more rows have no valid trx id, an unreadable date or amount, a repeated trx id, a direction that is neither in nor out, or do not name the account (another account\'s statement). One `errors` item per row (up to 50), its `field` `content.line.<n>` and its message naming the column. Nothing is guessed and nothing was stored: fix the file and upload it again.',
  },
  STATEMENT_DAY_IN_FUTURE: {
    status: 422,
    message: 'The day has not begun yet',
    description: 'The day to reconcile is after today in Asia/Dhaka, the wallets\' day. Nothing was stored.',
  },
  CONFLICT: {
    status: 409,
    message: 'Resource already exists',
    description: 'A resource with the same unique key (for example a gateway code) already exists; at the checkout, another request changed the submitted gateway transaction id at the same moment (reload and retry).',
  },
  /** Create or change a customer: the brand already has another customer with this e-mail in this mode. */
  CUSTOMER_EMAIL_TAKEN: {
    status: 409,
    message: 'Another customer of the brand has this email',
    description: 'Creating or changing a customer: the brand already has another customer with this e-mail address (after normalisation) in this mode. `field` is `email`.',
  },
  /** Create or change a customer: the brand already has another customer with this phone number in this mode. */
  CUSTOMER_PHONE_TAKEN: {
    status: 409,
    message: 'Another customer of the brand has this phone number',
    description: 'Creating or changing a customer: the brand already has another customer with this phone number (after normalisation to E.164) in this mode. `field` is `phone`.',
  },
  /** A customer CSV import over the row or size limit: nothing is imported. */
  CUSTOMER_IMPORT_TOO_LARGE: {
    status: 413,
    message: 'The CSV file is too large to import at once',
    description: 'A customer CSV import has more data rows or bytes than one import takes (README.md, Customers); nothing was imported. Split the file.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 409,
    message: 'Idempotency key was already used with a different request',
    description: 'The `Idempotency-Key` was used before, by the same brand, with another method, path or body.',
  },
  IDEMPOTENCY_REQUEST_IN_PROGRESS: {
    status: 409,
    message: 'A request with this idempotency key is still in progress',
    description: 'Another request with the same `Idempotency-Key` has not finished yet; retry later.',
  },
  OPERATOR_EMAIL_TAKEN: {
    status: 409,
    message: 'An operator with this e-mail exists',
    description: 'Operator e-mails are unique (compared lower-cased).',
  },
  LAST_OWNER: {
    status: 409,
    message: 'The last active owner cannot be demoted or disabled',
    description: 'Demoting or disabling this operator would leave the console without an active owner.',
  },
  INVALID_STATE: {
    status: 409,
    message: 'The resource is not in a state that allows this operation',
    description: 'For example completing a refund that already failed, or reporting `delivered` for an outbound SMS its device reported `failed`.',
  },
  INVOICE_NOT_DRAFT: {
    status: 409,
    message: 'Only a draft invoice can be changed or finalized',
    description: 'Updating or finalizing an invoice that was already finalized (open, overdue, paid or void). Nothing was changed.',
  },
  INVOICE_VOID: {
    status: 409,
    message: 'This invoice is void and cannot be paid or changed',
    description: 'Paying, sending or finalizing a void invoice. Nothing was charged or changed.',
  },
  INVOICE_ALREADY_PAID: {
    status: 409,
    message: 'This invoice is already paid',
    description: 'Paying or voiding an invoice whose payments already reached its total (refund its payments instead). Nothing was charged or changed.',
  },
  PAYMENT_ALREADY_STARTED: {
    status: 409,
    message: 'Payment already has a transaction',
    description: 'The payment intent already has a transaction in progress or completed.',
  },
  PAYMENT_NOT_CANCELABLE: {
    status: 409,
    message: 'Payment cannot be canceled',
    description:
      'Only an open payment can be canceled: no transaction yet, or one the customer has not paid on (`pending`, or `failed` so a retry is possible). ' +
      'Refused once the customer has reported paying (`awaiting_verification`: money may already have moved, so an operator verifies or rejects it first), ' +
      'while an automatic gateway is `processing`, and for `completed` (refund it instead) or `expired` payments.',
  },
  GATEWAY_TRX_ID_TAKEN: {
    status: 409,
    message: 'This gateway transaction id was already used',
    description:
      'Another transaction of the same brand on the gateway already claims this gateway transaction id, or a payment was already completed with it; one gateway transaction completes one payment only. At the checkout this answer is given a few times per payment at most (then `SUBMISSION_LIMIT_REACHED`), and never for a claim of another brand.',
  },
  BRAND_DISABLED: {
    status: 403,
    message: 'This merchant cannot take payments right now',
    description: "The payment's brand is disabled: its checkout pages and every checkout call refuse it, and nothing is written. The payment link works again if an admin re-enables the brand before it expires.",
  },
  SUBMISSION_LIMIT_REACHED: {
    status: 429,
    message: 'Too many transaction id submissions for this payment; please contact the merchant',
    description:
      'Checkout: the payment has used up its gateway transaction id replacements, or its answers that an id is already taken (both counted per payment, in the database). Further submissions on this payment are refused; the merchant can create a new payment link.',
  },
  SMS_EVIDENCE_MISMATCH: {
    status: 409,
    message: 'The SMS record does not fit this transaction',
    description: "Manual verification named an SMS record as proof, but it says another amount or gateway transaction id than the transaction, or comes from another gateway's sender.",
  },
  TEMPLATE_REGRESSION: {
    status: 409,
    message: 'The new SMS templates stop parsing messages that parse today',
    description:
      'Saving these templates or senders would stop parsing stored SMS of the last days that the current ones parse (the message gives the counts; `POST /gateways/{code}/template-evaluations` lists them). Send the same request with `confirm_regressions: true` to save anyway.',
  },
  TRANSACTION_NOT_REFUNDABLE: {
    status: 409,
    message: 'Only completed transactions can be refunded',
    description: 'The transaction is not in status `completed`.',
  },
  REFUND_EXCEEDS_AVAILABLE: {
    status: 422,
    message: 'Refund amount exceeds the refundable amount',
    description: "The sum of the transaction's non-failed refunds would exceed its amount.",
  },
  PAYMENT_EXPIRED: {
    status: 410,
    message: 'Payment link has expired',
    description: 'The payment intent is past its `expires_at`; create a new intent.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    message: 'Request body is too large',
    description: 'The body exceeds the configured maximum size.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    message: 'Request headers are too large',
    description: "The request line and headers together exceed the server's limit (Node's `maxHeaderSize`, 16 KiB by default). Answered before any route is matched, so the connection is closed after the answer.",
  },
  REQUEST_TIMEOUT: {
    status: 408,
    message: 'Request was not received in time',
    description: 'The client did not send the complete request (headers within 20 s, the whole request within 30 s). Answered before any route is matched; the connection is closed.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'Content-Type must be application/json',
    description: 'A request with a body was not sent as `application/json`.',
  },
  AMOUNT_EXCEEDS_MAXIMUM: {
    status: 422,
    message: 'Amount exceeds maximum',
    description: "The amount is above the gateway's maximum.",
  },
  AMOUNT_BELOW_MINIMUM: {
    status: 422,
    message: 'Amount is below minimum',
    description: "The amount is below the gateway's minimum.",
  },
  CURRENCY_NOT_SUPPORTED: {
    status: 422,
    message: 'Currency is not supported',
    description: 'The currency is not one the service knows.',
  },
  CURRENCY_CONVERSION_FAILED: {
    status: 422,
    message: 'Currency conversion failed',
    description: "No exchange rate exists between the intent's currency and the gateway's currency; nothing was created.",
  },
  GATEWAY_UNAVAILABLE: {
    status: 422,
    message: 'Gateway cannot take this payment',
    description: 'The gateway is disabled, unknown to the brand, or does not take this payment.',
  },
  INVALID_SMS_TEMPLATE: {
    status: 422,
    message: 'SMS template is invalid',
    description: 'The template regex does not compile or lacks the named groups `amount` and `trx_id`.',
  },
  WEBHOOK_URL_NOT_ALLOWED: {
    status: 422,
    message: 'Webhook URL is not allowed',
    description: 'The URL is not https/http, or resolves to a private, loopback, link-local or metadata address.',
  },
  WEBHOOK_ENDPOINT_LIMIT_REACHED: {
    status: 409,
    message: 'Webhook endpoint limit reached',
    description: 'The brand already has the most webhook endpoints allowed (16, both modes together); delete one first.',
  },
  INVALID_SIGNATURE: {
    status: 401,
    message: 'Invalid signature',
    description: 'A gateway callback carried a missing or wrong signature.',
  },
  RATE_LIMITED: {
    status: 429,
    message: 'Too many requests',
    description: 'The rate limit for this credential or address is exhausted; see `Retry-After`.',
  },
  INTERNAL_ERROR: {
    status: 500,
    message: 'Internal server error',
    description: 'An unexpected error; the `request_id` identifies it in the logs.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'Service temporarily unavailable',
    description: 'A dependency (database or job queue) is unreachable; retry with backoff.',
  },
} as const satisfies Record<ErrorCode, ErrorDefinition>;

/** Error thrown by services; the HTTP layer maps it to the envelope. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly field: string | null;
  readonly details: ReadonlyArray<{ code: ErrorCode; message: string; field: string | null }>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message?: string,
    opts: { field?: string | null; details?: Array<{ code: ErrorCode; message: string; field: string | null }>; headers?: Record<string, string> } = {},
  ) {
    super(message ?? errorRegistry[code].message);
    this.name = 'AppError';
    this.code = code;
    this.field = opts.field ?? null;
    this.details = opts.details ?? [{ code, message: this.message, field: this.field }];
    this.headers = opts.headers ?? {};
  }

  get status(): HttpErrorStatus {
    return errorRegistry[this.code].status;
  }
}
