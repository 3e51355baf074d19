import { randomBytes } from 'node:crypto';
import { payInto } from '../wallet-accounts/service.ts';
import { settleInvoicePayments } from '../invoices/settle.ts';
import { AppError, type ErrorCode } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import type { PiiBinding } from '../../infra/crypto/pii-cipher.ts';
import { normalizePhone } from '../customers/normalize.ts';
import { loadRates } from '../fx/service.ts';
import { currenciesOf, noRateMessage, quoteGateway } from '../gateways/quote.ts';
import { getGateway } from '../gateways/service.ts';
import { gatewayServesMode } from '../sandbox/gateway.ts';
import { recordEvent, recordEvents, type EventInput } from '../webhooks/outbox.ts';
import { OPEN_TRANSACTION_STATUSES, type TransactionStatus } from './entities.ts';
import { loadIntent } from './intents.ts';
import { transaction, type Db } from '../db.ts';
import { paymentEventData, paymentEventDataOf, trimDecimal } from './view.ts';
import type { PaymentRow } from './queries/payments.ts';
import {
  completeTransactionRows, hasLiveTransaction, insertTransaction, lockTransactionRow, markTransactionFailed, setOpenClaim, transactionRow, updateClaim,
  type IntentEventRow, type TransactionQueryRow,
} from './queries/transactions.ts';
import { isUniqueViolation } from '../../infra/database/database.ts';

/** A transaction as services hand it to each other (camelCase, money as strings). */
export interface TransactionRecord {
  id: number;
  trxId: string;
  brandId: number;
  /** Its intent's mode (the database keeps them equal). */
  mode: Mode;
  intentId: number;
  paymentId: string;
  /** The invoice its intent pays, if any (set when the intent is made, pay.ts; never changed). */
  invoiceId: number | null;
  gatewayId: number;
  gatewayCode: string;
  gatewayType: 'manual' | 'automatic';
  method: string;
  gatewayTrxId: string | null;
  amount: string;
  currency: string;
  fee: string;
  /** What the wallet SMS must carry: `amount`, or amount + fee when the gateway's customer pays the fee. */
  smsAmount: string;
  exchangeRate: string | null;
  status: TransactionStatus;
  failureReason: string | null;
  completionSource: string | null;
  createdAt: Date;
  completedAt: Date | null;
  /** The brand's wallet account the customer was told to pay into (manual gateways); null: the gateway's own number. */
  walletAccount: { id: number; number: string; deviceId: number | null; simSlot: number | null } | null;
}

export interface TransactionChange {
  transaction: TransactionRecord;
  /** False when the call found the transaction already in the target state (a repeat). */
  changed: boolean;
}

/** Where a completion came from; kept on the row for the audit trail. */
export type CompletionSource = 'sms' | 'admin' | 'gateway_callback' | 'sandbox' | (string & {});

export function toTransaction(r: TransactionQueryRow): TransactionRecord {
  return {
    id: r.id,
    trxId: r.trx_id,
    brandId: r.brand_id,
    mode: r.mode,
    intentId: r.intent_id,
    paymentId: r.payment_id,
    invoiceId: r.invoice_id,
    gatewayId: r.gateway_id,
    gatewayCode: r.gateway_code,
    gatewayType: r.gateway_type,
    method: r.method,
    gatewayTrxId: r.gateway_trx_id,
    amount: r.amount,
    currency: r.currency,
    fee: r.fee,
    smsAmount: r.sms_amount,
    exchangeRate: trimDecimal(r.exchange_rate),
    status: r.status,
    failureReason: r.failure_reason,
    completionSource: r.completion_source,
    createdAt: r.created_at,
    completedAt: r.completed_at,
    walletAccount: r.wallet_account
      ? { id: Number(r.wallet_account.id), number: r.wallet_account.number, deviceId: r.wallet_account.device_id === null ? null : Number(r.wallet_account.device_id), simSlot: r.wallet_account.sim_slot }
      : null,
  };
}

export async function getTransaction(em: Db, id: number): Promise<TransactionRecord> {
  const row = await transactionRow(em, { id });
  if (!row) throw new AppError('TRANSACTION_NOT_FOUND');
  return toTransaction(row);
}

export async function getTransactionByTrxId(em: Db, trxId: string): Promise<TransactionRecord> {
  const row = await transactionRow(em, { trxId });
  if (!row) throw new AppError('TRANSACTION_NOT_FOUND');
  return toTransaction(row);
}

/** Service reference: `TRX` and 16 hex digits (64 random bits; the unique index catches the odd clash). */
function newTrxId(): string {
  return `TRX${randomBytes(8).toString('hex').toUpperCase()}`;
}

const GATEWAY_TRX_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

/** Trimmed; a malformed one is a VALIDATION_ERROR on `gateway_trx_id`. */
export function cleanGatewayTrxId(value: string): string {
  const v = value.trim();
  if (!GATEWAY_TRX_ID_RE.test(v)) {
    throw new AppError('VALIDATION_ERROR', 'Must be 1 to 100 letters, digits, _ or -', { field: 'gateway_trx_id' });
  }
  return v;
}

export const TRANSACTION_SENDER_CONTEXT = 'transaction.sender_number';

/**
 * Bound to the brand and the service trx id: unique, made before the INSERT
 * (the bigint id is known only after it) and never changed.
 */
export function transactionBinding(brandId: number | string, trxId: string): PiiBinding {
  return { brandId, row: trxId };
}

/** E.164, checked before any write; a malformed one is a VALIDATION_ERROR on `sender_number`. */
function cleanSender(senderNumber: string): string {
  const phone = normalizePhone(senderNumber);
  if (!phone) throw new AppError('VALIDATION_ERROR', 'Must be a valid phone number', { field: 'sender_number' });
  return phone;
}

function encryptSender(keys: PersonalDataKeys, phone: string | null, brandId: number, trxId: string): string | null {
  return phone === null ? null : keys.pii.encrypt(phone, TRANSACTION_SENDER_CONTEXT, transactionBinding(brandId, trxId));
}

/** Maps the unique indexes that guard payments to their error codes. */
function uniqueViolation(err: unknown): ErrorCode | null {
  if (!isUniqueViolation(err)) return null;
  const e = err as { constraint?: string };
  if (e.constraint === 'transactions_gateway_trx_id_uniq' || e.constraint === 'transactions_gateway_trx_id_completed_uniq') return 'GATEWAY_TRX_ID_TAKEN';
  if (e.constraint === 'transactions_one_live_per_intent') return 'PAYMENT_ALREADY_STARTED';
  return null;
}

async function mapUnique<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const code = uniqueViolation(err);
    if (code) throw new AppError(code, undefined, code === 'GATEWAY_TRX_ID_TAKEN' ? { field: 'gateway_trx_id' } : {});
    throw err;
  }
}

export interface StartTransactionInput {
  intentId?: number;
  /** The public payment id (the checkout page has this one). */
  paymentId?: string;
  gatewayCode: string;
  /** One of the gateway's methods; default its first. */
  method?: string;
  /** Manual gateways: the customer's gateway transaction id (then the transaction awaits verification). */
  gatewayTrxId?: string | null;
  senderNumber?: string | null;
}

/**
 * Starts paying an intent on a gateway. Converts into the gateway's currency
 * (direct rate, else inverse, half-up), checks its limits, computes the fee.
 * Manual gateway: `awaiting_verification` with a gateway trx id, else `pending`;
 * automatic gateway: `processing` (waiting for its callback).
 * Errors (nothing is created): PAYMENT_NOT_FOUND, PAYMENT_EXPIRED, INVALID_STATE (canceled),
 * PAYMENT_ALREADY_STARTED, GATEWAY_NOT_FOUND, GATEWAY_UNAVAILABLE,
 * CURRENCY_CONVERSION_FAILED, AMOUNT_BELOW_MINIMUM, AMOUNT_EXCEEDS_MAXIMUM,
 * GATEWAY_TRX_ID_TAKEN, VALIDATION_ERROR.
 */
export async function startTransaction(em: Db, keys: PersonalDataKeys, input: StartTransactionInput): Promise<TransactionRecord> {
  const gatewayTrxId = input.gatewayTrxId ? cleanGatewayTrxId(input.gatewayTrxId) : null;
  const senderPhone = input.senderNumber ? cleanSender(input.senderNumber) : null;
  return mapUnique(() =>
    transaction(em, async (tx) => {
      const ref = input.intentId !== undefined ? { intentId: input.intentId } : { paymentId: input.paymentId ?? '' };
      const intent = await loadIntent(tx, ref, { forUpdate: true });
      if (!intent) throw new AppError('PAYMENT_NOT_FOUND');
      if (intent.status === 'completed') throw new AppError('PAYMENT_ALREADY_STARTED', 'Payment is already completed');
      if (intent.status === 'canceled') throw new AppError('INVALID_STATE', 'Payment was canceled by the merchant');
      if (intent.status === 'expired' || intent.expiresAt.getTime() <= Date.now()) throw new AppError('PAYMENT_EXPIRED');
      if (await hasLiveTransaction(tx, intent.id)) throw new AppError('PAYMENT_ALREADY_STARTED');

      const gateway = await getGateway(tx, input.gatewayCode);
      if (!gateway.enabled) throw new AppError('GATEWAY_UNAVAILABLE', `Gateway ${gateway.code} is disabled`, { field: 'gateway' });
      if (!gatewayServesMode(gateway, intent.mode)) {
        throw new AppError('GATEWAY_UNAVAILABLE', `Gateway ${gateway.code} takes only test-mode payments`, { field: 'gateway' });
      }
      const method = input.method ?? gateway.methods[0]!;
      if (!gateway.methods.includes(method)) {
        throw new AppError('VALIDATION_ERROR', `Gateway ${gateway.code} offers ${gateway.methods.join(', ')}`, { field: 'method' });
      }
      const rates = gateway.currencies.includes(intent.currency) ? [] : await loadRates(tx, intent.currency, currenciesOf([gateway]));
      const quote = quoteGateway(gateway, intent.amount, intent.currency, rates);
      if (quote.refusal === 'CURRENCY_CONVERSION_FAILED') {
        throw new AppError('CURRENCY_CONVERSION_FAILED', noRateMessage(intent.currency, [gateway]));
      }
      if (quote.refusal) throw new AppError(quote.refusal, undefined, { field: 'amount' });

      // A manual gateway: the brand's own account this payment was shown (or is given now), when it has accounts there.
      let walletAccountId: number | null = null;
      if (gateway.type === 'manual') {
        const into = (await payInto(tx, { brandId: intent.brandId, intentId: intent.id, gateways: [{ id: gateway.id, amountToSend: quote.toSend! }] })).get(gateway.id)!;
        if (into.kind === 'none') {
          throw new AppError('GATEWAY_UNAVAILABLE', `No ${gateway.name} account of the merchant can take this payment now`, { field: 'gateway' });
        }
        if (into.kind === 'account') walletAccountId = into.account.id;
      }
      const status: TransactionStatus = gateway.type === 'automatic' ? 'processing' : gatewayTrxId ? 'awaiting_verification' : 'pending';
      const trxId = newTrxId();
      // A quote without a refusal has every amount. mode is not given: a trigger copies the intent's.
      const id = await insertTransaction(tx, {
        brand_id: intent.brandId, intent_id: intent.id, trx_id: trxId, gateway_id: gateway.id, wallet_account_id: walletAccountId, method, gateway_trx_id: gatewayTrxId, amount: quote.amount!,
        currency: quote.currency, fee: quote.fee!, sms_amount: quote.toSend!, exchange_rate: quote.exchangeRate, status,
        sender_number_encrypted: encryptSender(keys, senderPhone, intent.brandId, trxId),
      });
      return getTransaction(tx, id);
    }),
  );
}

/** Locks the transaction's intent, then the transaction (always in that order), and returns the locked transaction. */
async function lockTransaction(tx: Db, transactionId: number): Promise<TransactionRecord> {
  const row = await lockTransactionRow(tx, transactionId);
  if (!row) throw new AppError('TRANSACTION_NOT_FOUND');
  return toTransaction(row);
}

/**
 * The checkout's replacement of a mistyped gateway transaction id
 * (checkout/replace.ts): the transaction, locked by the caller (trx id locks,
 * intent, transaction), still `awaiting_verification`, now claims `gatewayTrxId`
 * instead, so its earlier claim is free for whoever truly owns it. The sender
 * number goes with the claim it was typed for: replaced, or cleared when none
 * is given. GATEWAY_TRX_ID_TAKEN when another transaction of the brand claims
 * the new id. The caller runs this in its own database transaction.
 */
export async function replaceLockedGatewayTrxId(
  tx: Db,
  keys: PersonalDataKeys,
  t: TransactionRecord,
  input: { gatewayTrxId: string; senderNumber?: string | null },
): Promise<TransactionRecord> {
  if (!tx.isTransaction) throw new Error('replaceLockedGatewayTrxId must run inside a transaction');
  const gatewayTrxId = cleanGatewayTrxId(input.gatewayTrxId);
  const sender = encryptSender(keys, input.senderNumber ? cleanSender(input.senderNumber) : null, t.brandId, t.trxId);
  if (t.status !== 'awaiting_verification' || t.gatewayType !== 'manual') {
    throw new AppError('INVALID_STATE', `Transaction is ${t.status}; only a manual-gateway transaction awaiting verification takes another gateway transaction id`);
  }
  const updated = await mapUnique(() => updateClaim(tx, t.id, { gatewayTrxId, senderEncrypted: sender }));
  if (!updated) throw new Error(`transaction ${t.id} changed while locked`);
  return getTransaction(tx, t.id);
}

/**
 * A person's correction of a mistyped claim (sms/matching/review.ts): the
 * transaction, locked by the caller with both ids, now claims `gatewayTrxId`.
 * The payer number stays (the customer typed it for this payment, not for the
 * id). GATEWAY_TRX_ID_TAKEN when another transaction of the brand claims it.
 */
export async function correctLockedGatewayTrxId(tx: Db, t: TransactionRecord, gatewayTrxId: string): Promise<void> {
  if (!tx.isTransaction) throw new Error('correctLockedGatewayTrxId must run inside a transaction');
  const id = cleanGatewayTrxId(gatewayTrxId);
  const updated = await mapUnique(() => setOpenClaim(tx, t.id, id));
  if (!updated) throw new Error(`transaction ${t.id} changed while locked`);
}

/**
 * Completes an open transaction and its intent, and records `payment.completed`,
 * all in one database transaction. A repeat (already completed) changes nothing
 * and returns `changed: false`; a failed or expired one is INVALID_STATE.
 * `gatewayTrxId` (from the SMS or the gateway callback) is stored when the
 * transaction has none yet; a different one already on it is INVALID_STATE.
 */
export async function completeTransaction(
  em: Db,
  transactionId: number,
  opts: { source: CompletionSource; gatewayTrxId?: string | null },
): Promise<TransactionChange> {
  const claimed = opts.gatewayTrxId ? cleanGatewayTrxId(opts.gatewayTrxId) : null;
  return transaction(em, async (tx) => (await completeLockedTransactions(tx, [{ t: await lockTransaction(tx, transactionId), gatewayTrxId: claimed }], opts.source))[0]!);
}

/**
 * Completes transactions whose locks the caller holds: each one's intent row,
 * then the transaction row (in that order), with `t` read under them. The one
 * way a transaction is completed: completeTransaction (one, locked here), the
 * SMS matcher (a batch, locked while deciding) and operators all come here.
 * It runs in the caller's database transaction, set-based: every transaction
 * and intent in one statement, every `payment.completed` event in one
 * recordEvents. Every refusal is decided before the write (completionRefusal):
 * an already completed one answers `changed: false`; a failed or expired one,
 * or one carrying another gateway trx id, is INVALID_STATE and nothing is
 * written. The one error the write can raise is GATEWAY_TRX_ID_TAKEN (the
 * unique index on the gateway trx id, when `gatewayTrxId` is stored on a
 * transaction that had none): a caller that wants to go on after that refusal
 * runs this in a nested transaction() (a savepoint). Each event shows the
 * payment as the statement returned it; only when the intent was not pending or
 * another transaction is its latest is the payment read back.
 * Returns the changes in the order given.
 */
export async function completeLockedTransactions(
  tx: Db,
  items: ReadonlyArray<{ t: TransactionRecord; gatewayTrxId?: string | null }>,
  source: CompletionSource,
): Promise<TransactionChange[]> {
  if (!tx.isTransaction) throw new Error('completeLockedTransactions must run inside a transaction');
  if (new Set(items.map(({ t }) => t.id)).size !== items.length) throw new Error('completeLockedTransactions: a transaction given twice');
  const claimed = new Map(items.map(({ t, gatewayTrxId }) => [t.id, gatewayTrxId ? cleanGatewayTrxId(gatewayTrxId) : null]));
  const toComplete = items.filter(({ t, gatewayTrxId }) => completionRefusal(t, gatewayTrxId) !== 'already_completed');
  if (toComplete.length === 0) return items.map(({ t }) => ({ transaction: t, changed: false }));
  const rows = await mapUnique(() =>
    completeTransactionRows(tx, {
      ids: toComplete.map(({ t }) => t.id),
      intentIds: toComplete.map(({ t }) => t.intentId),
      source,
      claimed: Object.fromEntries(toComplete.map(({ t }) => [String(t.id), claimed.get(t.id) ?? null])),
    }),
  );
  // Ids through a CTE may come back as text: compared as numbers.
  const byId = new Map(rows.map((r) => [Number(r.done_id), r]));
  // The caller's locks and completionRefusal make this impossible unless an invariant broke: the whole transaction fails.
  if (byId.size !== toComplete.length) {
    throw new Error(`transactions ${toComplete.map(({ t }) => t.id).join(', ')}: ${toComplete.length - byId.size} no longer open when completed`);
  }
  const changes = new Map<number, TransactionRecord>();
  const events: EventInput[] = [];
  for (const { t } of toComplete) {
    const row = byId.get(t.id)!;
    // The locked row plus what the UPDATE changed: no read back.
    const transaction: TransactionRecord = { ...t, status: 'completed', completedAt: row.completed_at, completionSource: row.completion_source, gatewayTrxId: row.gateway_trx_id };
    const intent = intentEventRowOf(row);
    const data = intent && Number(row.latest_transaction_id) === t.id ? paymentEventDataOf(completedPaymentRow(intent, transaction)) : await paymentEventData(tx, t.intentId);
    events.push({ brandId: t.brandId, mode: t.mode, event: 'payment.completed', data, transactionId: t.id });
    changes.set(t.id, transaction);
  }
  // The invoices these payments pay, in the same transaction: their events go out with the payments'.
  // Known from the locked rows, so a completion that pays no invoice (the usual one) costs no statement more.
  events.push(...(await settleInvoicePayments(tx, toComplete.filter(({ t }) => t.invoiceId !== null).map(({ t }) => t.intentId))));
  await recordEvents(tx, events);
  return items.map(({ t }) => {
    const transaction = changes.get(t.id);
    return transaction ? { transaction, changed: true } : { transaction: t, changed: false };
  });
}

/**
 * What completeLockedTransactions refuses, decided on the locked row before any
 * write: `already_completed` (it answers `changed: false`), or INVALID_STATE
 * (thrown); null when it would complete.
 */
export function completionRefusal(t: TransactionRecord, gatewayTrxId: string | null | undefined): 'already_completed' | null {
  const claimed = gatewayTrxId ? cleanGatewayTrxId(gatewayTrxId) : null;
  if (t.status === 'completed') return 'already_completed';
  if (!(OPEN_TRANSACTION_STATUSES as readonly string[]).includes(t.status)) {
    throw new AppError('INVALID_STATE', `Transaction is ${t.status} and cannot be completed`);
  }
  if (claimed && t.gatewayTrxId && t.gatewayTrxId.toUpperCase() !== claimed.toUpperCase()) {
    throw new AppError('INVALID_STATE', 'Transaction already carries another gateway transaction id');
  }
  return null;
}

/** The intent's UPDATE RETURNING columns as a completion's row has them: nullable, `created_at` under its own name. */
type IntentReturned = { [K in keyof IntentEventRow as K extends 'intent_created_at' ? 'created_at' : K]: IntentEventRow[K] | null };

/**
 * The intent's columns of a completion's row (completeLockedTransactions),
 * or null when its UPDATE changed nothing. The left
 * join makes them nullable in the row type; with an id, the UPDATE returned them all.
 */
export function intentEventRowOf(row: IntentReturned): IntentEventRow | null {
  if (row.intent_id === null) return null;
  return {
    intent_id: row.intent_id, payment_id: row.payment_id!, brand_id: row.brand_id!, intent_amount: row.intent_amount!, intent_currency: row.intent_currency!,
    reference: row.reference, metadata: row.metadata!, intent_status: row.intent_status!, expires_at: row.expires_at!, intent_created_at: row.created_at!,
    customer_id: row.customer_id,
  };
}

/** The row paymentQuery would read now for a just completed transaction (the intent's latest). */
function completedPaymentRow(intent: IntentEventRow, t: TransactionRecord): PaymentRow {
  return {
    intent_id: intent.intent_id,
    payment_id: intent.payment_id,
    brand_id: intent.brand_id,
    intent_amount: intent.intent_amount,
    intent_currency: intent.intent_currency,
    reference: intent.reference,
    metadata: intent.metadata,
    intent_status: intent.intent_status,
    expires_at: intent.expires_at,
    intent_created_at: intent.intent_created_at,
    customer_id: intent.customer_id,
    transaction_id: t.id,
    trx_id: t.trxId,
    gateway_trx_id: t.gatewayTrxId,
    amount: t.amount,
    currency: t.currency,
    fee: t.fee,
    // Already trimmed; toPaymentResource trims again, which leaves it as it is.
    exchange_rate: t.exchangeRate,
    status: t.status,
    gateway_code: t.gatewayCode,
    method: t.method,
    failure_reason: t.failureReason,
    created_at: t.createdAt,
    completed_at: t.completedAt,
  };
}

/**
 * Fails an open transaction and records `payment.failed` in the same database
 * transaction. The intent stays payable (a new attempt may start) until it
 * expires. Already failed: `changed: false`; completed or expired: INVALID_STATE.
 */
export async function failTransaction(em: Db, transactionId: number, opts: { reason: string }): Promise<TransactionChange> {
  const reason = opts.reason.trim().slice(0, 500) || 'failed';
  return transaction(em, async (tx) => {
    const t = await lockTransaction(tx, transactionId);
    if (t.status === 'failed') return { transaction: t, changed: false };
    if (!(OPEN_TRANSACTION_STATUSES as readonly string[]).includes(t.status)) {
      throw new AppError('INVALID_STATE', `Transaction is ${t.status} and cannot fail`);
    }
    await markTransactionFailed(tx, transactionId, reason);
    const data = await paymentEventData(tx, t.intentId);
    await recordEvent(tx, { brandId: t.brandId, mode: t.mode, event: 'payment.failed', data, transactionId });
    return { transaction: await getTransaction(tx, transactionId), changed: true };
  });
}
