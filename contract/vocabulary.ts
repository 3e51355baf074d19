/**
 * The words the wire and the database share: every status, mode and other
 * closed set of values that a contract schema names and a table stores (or a
 * domain query filters on). Defined once here; the contract's zod schemas build
 * their enums from these arrays (`z.enum(transactionStatuses)`) and the entities
 * build their column enums from the same arrays, so an API value and a stored
 * value can never drift apart.
 *
 * Plain `as const` arrays and their types, no zod and no other import: the
 * entities and the domain queries import this module and nothing else from
 * contract/ (the lint holds them to it), so the data layer depends on the words
 * alone, not on the validation library or a wire schema. It ships in the SDKs
 * with the rest of contract/, so it never imports server code either.
 */

/**
 * Test or live mode. Every payment object belongs to one mode; an API key
 * sees and creates only objects of its own mode (`sk_test_…` test, `sk_live_…`
 * live), and the `sandbox` gateway exists only in test mode.
 */
export const modes = ['live', 'test'] as const;
/**
 * What an API key may do (README, "API key scopes"): `read` every GET, `write`
 * payments, payment links and customers, `refunds` ask for refunds, `webhooks`
 * manage webhook endpoints. A key with no scopes listed may do everything.
 */
export const apiKeyScopes = ['read', 'write', 'refunds', 'webhooks'] as const;
export type ApiKeyScope = (typeof apiKeyScopes)[number];
export type Mode = (typeof modes)[number];

// Brands, operators, devices.

/**
 * The API dialect of a key: `native` (our shapes, `sk_…` keys) or `ownpay`
 * (OwnPay's plugins' and SDKs' shapes, `op_…` keys); fixed when the key is made.
 */
export const apiKeyDialects = ['native', 'ownpay'] as const;
export type ApiKeyDialect = (typeof apiKeyDialects)[number];

export const brandStatuses = ['active', 'disabled'] as const;
export type BrandStatus = (typeof brandStatuses)[number];

export const operatorRoles = ['owner', 'operator', 'viewer'] as const;
export type OperatorRole = (typeof operatorRoles)[number];

/** A device is `active` until revoked (by an admin, a re-pairing or a reused refresh token). */
export const deviceStatuses = ['active', 'revoked'] as const;
export type DeviceStatus = (typeof deviceStatuses)[number];
/** Which app a device paired with: ours (`/devices/pairings`) or OwnPay's Android app (`POST /devices`, README "The OwnPay Android app"). */
export const deviceProtocols = ['native', 'ownpay'] as const;
export type DeviceProtocol = (typeof deviceProtocols)[number];
/** What the console shows of a device now: its presence, or `revoked`. */
export const devicePresences = ['online', 'offline', 'revoked'] as const;
export type DevicePresence = (typeof devicePresences)[number];
/** A recorded presence change: what the offline detector moved a device to. */
export const presenceChangeStatuses = ['online', 'offline'] as const;
export type PresenceChangeStatus = (typeof presenceChangeStatuses)[number];

// Gateways and SMS.

export const gatewayTypes = ['manual', 'automatic'] as const;

/** A brand's wallet account on a manual gateway (wallet-accounts): what the customer does to pay it (Send Money, Cash Out, Payment). */
export const walletAccountTypes = ['personal', 'agent', 'merchant'] as const;
export type WalletAccountType = (typeof walletAccountTypes)[number];
export type GatewayType = (typeof gatewayTypes)[number];
/** Who pays the gateway fee: the merchant (the customer sends the amount) or the customer (sends amount + fee). */
export const feePayers = ['merchant', 'customer'] as const;
export type FeePayer = (typeof feePayers)[number];
/** Which way an SMS moves money: `in` a credit that may pay a payment, `out` a debit (balance chain evidence only). */
export const smsDirections = ['in', 'out'] as const;
export type SmsDirection = (typeof smsDirections)[number];

/** Statuses of a stored SMS record: `pending` until matching decides, then how it was decided. */
export const smsRecordStatuses = ['pending', 'matched', 'no_match', 'no_candidate', 'low_confidence', 'duplicate', 'balance_mismatch', 'money_out'] as const;
export type SmsRecordStatus = (typeof smsRecordStatuses)[number];
/**
 * Match statuses that leave a record for a person (docs/matching.md). A record
 * in one of them, not yet resolved, is in the review queue.
 */
export const smsReviewStatuses = ['no_candidate', 'low_confidence', 'balance_mismatch'] as const;
export type SmsReviewStatus = (typeof smsReviewStatuses)[number];
/** How a person resolved a record left for review. */
export const smsResolutions = ['verified', 'rejected', 'dismissed'] as const;
export type SmsResolution = (typeof smsResolutions)[number];
/**
 * A record's place in its phone's balance chain for one wallet (docs/matching.md).
 * In the order of the database's check constraint, which the entity's enum must reproduce.
 */
export const balanceChainStates = ['first', 'follows', 'mismatch', 'impossible', 'unreadable', 'after_break', 'missing', 'repaired', 'new_sim'] as const;
export type BalanceChainState = (typeof balanceChainStates)[number];

export const outboundSmsStatuses = ['pending', 'leased', 'sent', 'failed', 'delivered', 'expired'] as const;
export type OutboundSmsStatus = (typeof outboundSmsStatuses)[number];

/** Why a backfill of a phone's inbox is asked: by an operator, by the service on a gap, when a customer submits a trx id no stored SMS proves (`payment_submitted`), or when the phone's SMS numbers have a hole (`sequence_gap`). */
export const backfillReasons = ['manual', 'offline', 'heartbeat_gap', 'balance_chain_break', 'payment_submitted', 'sequence_gap'] as const;
export type BackfillReason = (typeof backfillReasons)[number];
export const backfillStatuses = ['pending', 'delivered', 'answered', 'failed'] as const;
export type BackfillStatus = (typeof backfillStatuses)[number];

// Payments and refunds.

/** Statuses of one transaction (one attempt on one gateway). */
export const transactionStatuses = ['pending', 'processing', 'awaiting_verification', 'completed', 'failed', 'expired'] as const;
export type TransactionStatus = (typeof transactionStatuses)[number];
/** Statuses of a payment intent (the merchant's request to be paid), apart from its transactions. */
export const intentStatuses = ['pending', 'completed', 'expired', 'canceled'] as const;
export type IntentStatus = (typeof intentStatuses)[number];
/** Statuses a payment shows: its latest transaction's, or its intent's; `canceled` when the merchant canceled it. */
export const paymentStatuses = [...transactionStatuses, 'canceled'] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

export const refundStatuses = ['pending', 'completed', 'failed'] as const;
export type RefundStatus = (typeof refundStatuses)[number];

/** The kinds of entry in a transaction's timeline (the console's history of one payment). */
export const timelineKinds = ['created', 'sms', 'completed', 'failed', 'expired', 'webhook', 'refund', 'action'] as const;
export type TimelineKind = (typeof timelineKinds)[number];

// Webhooks.

export const webhookEventNames = [
  'payment.completed',
  'payment.failed',
  'payment.expired',
  'payment.canceled',
  'refund.completed',
  'refund.failed',
  'device.offline',
  'device.online',
  'gateway.sms_unparsed',
] as const;
export type WebhookEventName = (typeof webhookEventNames)[number];

/**
 * How deliveries to an endpoint are signed and shaped: `paycollect` (our
 * `X-Webhook-Signature` and event bodies) or `ownpay` (the headers and body
 * OwnPay's plugins verify and read).
 */
export const webhookSignings = ['paycollect', 'ownpay'] as const;
export type WebhookSigning = (typeof webhookSignings)[number];

export const deliveryStatuses = ['pending', 'retrying', 'success', 'dead_letter'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];
/** How one delivery attempt ended. */
export const deliveryAttemptOutcomes = ['success', 'failure', 'abandoned'] as const;
export type DeliveryAttemptOutcome = (typeof deliveryAttemptOutcomes)[number];
/** Why an endpoint is disabled: by the merchant, answered 410, or failed over a whole retry window. */
export const endpointDisabledReasons = ['merchant', 'gone', 'failing'] as const;
export type EndpointDisabledReason = (typeof endpointDisabledReasons)[number];

// Alerts.

/** What raises an operator alert (server/domain/alerts/raise.ts). */
export const alertTypes = ['device_offline', 'battery_low', 'device_cannot_receive_sms', 'review_waiting', 'webhook_endpoint_disabled', 'sms_format_alarm'] as const;
export type AlertType = (typeof alertTypes)[number];
/** An alert's delivery state. */
export const alertStatuses = ['pending', 'delivered', 'failed', 'suppressed'] as const;
export type AlertStatus = (typeof alertStatuses)[number];

/** A customer's receipt e-mail (receipts): `pending` to send, `sent`, `failed` after its retries, `skipped` (no e-mail address to send to). */
export const receiptStatuses = ['pending', 'sent', 'failed', 'skipped'] as const;
export type ReceiptStatus = (typeof receiptStatuses)[number];
/** What a receipt is for: a completed payment or a completed refund. */
export const receiptKinds = ['payment', 'refund'] as const;

/** A phone's health for forwarding SMS, from what its heartbeats report (devices/diagnostics.ts). */
export const phoneHealthStates = ['ok', 'at_risk', 'cannot_receive', 'unknown'] as const;
export type PhoneHealthState = (typeof phoneHealthStates)[number];

/** Layouts of a wallet statement export the reconciliation reads (docs/reconciliation.md, "Formats"). */
export const statementFormats = ['bkash', 'nagad', 'generic'] as const;
export type StatementFormat = (typeof statementFormats)[number];
/** Which way a statement row moves money: `in` into the account, `out` out of it. */
export const statementDirections = ['in', 'out'] as const;
/**
 * What a reconciliation found for one trx id (docs/reconciliation.md): `matched` the statement and the
 * service agree; `statement_only` money arrived with no SMS; `sms_only` an SMS no statement row carries;
 * `amount_mismatch` the amounts differ; `fee_difference` the amounts agree, the fees do not.
 */
export const reconciliationCategories = ['matched', 'statement_only', 'sms_only', 'amount_mismatch', 'fee_difference'] as const;
export type ReconciliationCategory = (typeof reconciliationCategories)[number];
