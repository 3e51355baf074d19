import { randomUUID } from 'node:crypto';
import { AppError, errorRegistry } from '../../../contract/common/errors.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { AMOUNT_MAXIMUM_MESSAGE } from '../../../contract/common/money.ts';
import type { PaymentCreatedResource } from '../../../contract/merchant/payments.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { findOrCreateCustomer, type CustomerInput } from '../customers/service.ts';
import { intentRefusal, noRateMessage, quoteGatewaysOf } from '../gateways/quote.ts';
import { gatewaysOfMode } from '../sandbox/gateway.ts';
import { toQuotableGateway, type QuotableGateway } from '../gateways/service.ts';
import { parseStored } from '../settings/service.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { transaction, type Db } from '../db.ts';
import { paymentEventData } from './view.ts';
import {
  insertIntent, intentBrandAndMode, intentConfigRows, intentRow, lockDueIntents, markIntentsExpired, type InsertedIntent, type IntentRow, type IntentValues,
} from './queries/intents.ts';

const MIN_EXPIRY_SECONDS = 60;
const MAX_EXPIRY_SECONDS = 30 * 24 * 3600;

export interface CreateIntentInput {
  amount: string;
  currency: string;
  reference?: string | null;
  customer?: CustomerInput | null;
  metadata?: Record<string, unknown>;
  /** Seconds from now; exclusive with `expiresAt`. Default: setting `intent_expiry_minutes`. */
  expiresIn?: number;
  expiresAt?: Date;
  successUrl?: string | null;
  cancelUrl?: string | null;
  /** OwnPay's per-payment webhook URL (outbox.ts: delivered to only when it is a registered endpoint URL). */
  callbackUrl?: string | null;
}

function checkoutUrl(publicBaseUrl: string, paymentId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/checkout/${paymentId}`;
}

/** The configuration every intent creation reads: the enabled gateways and the default expiry. */
export interface IntentConfig {
  /** What the amount check reads of each enabled gateway (not its SMS templates). */
  gateways: readonly QuotableGateway[];
  expiryMinutes: number;
}

/**
 * Both in one statement, read by each create inside its own transaction, so a
 * gateway disabled or a setting changed before a request is seen by it: the
 * setting rides on every gateway row (one row of nulls when no gateway is enabled).
 */
async function loadIntentConfig(em: Db): Promise<IntentConfig> {
  const rows = await intentConfigRows(em);
  return {
    // The left join makes every gateway column nullable in the row type; a row with an id is a whole gateway row.
    gateways: rows.flatMap(({ expiry_setting: _setting, id, ...g }) => (id === null ? [] : [toQuotableGateway(g as Parameters<typeof toQuotableGateway>[0])])),
    expiryMinutes: parseStored('intent_expiry_minutes', rows[0]?.expiry_setting ?? undefined),
  };
}

/**
 * An absolute expiry, or seconds from the database's `now()` (so `expires_at -
 * created_at` is exactly the requested lifetime).
 */
function resolveExpiry(config: IntentConfig, input: CreateIntentInput, now: Date): { at: Date | null; seconds: number | null } {
  if (input.expiresAt) {
    const ahead = (input.expiresAt.getTime() - now.getTime()) / 1000;
    if (ahead < MIN_EXPIRY_SECONDS || ahead > MAX_EXPIRY_SECONDS) {
      throw new AppError('VALIDATION_ERROR', 'Must be at least 60 seconds and at most 30 days in the future', { field: 'expires_at' });
    }
    return { at: input.expiresAt, seconds: null };
  }
  return { at: null, seconds: input.expiresIn ?? config.expiryMinutes * 60 };
}

/** Refuses an intent no enabled gateway could ever take, with the messages the error registry documents. */
async function checkSomeGatewayTakes(em: Db, config: IntentConfig, amount: string, currency: string): Promise<void> {
  const refusal = intentRefusal(await quoteGatewaysOf(em, config.gateways, amount, currency));
  if (refusal === 'AMOUNT_EXCEEDS_MAXIMUM') throw new AppError('AMOUNT_EXCEEDS_MAXIMUM', AMOUNT_MAXIMUM_MESSAGE, { field: 'amount' });
  if (refusal === 'AMOUNT_BELOW_MINIMUM') {
    throw new AppError('AMOUNT_BELOW_MINIMUM', `${errorRegistry.AMOUNT_BELOW_MINIMUM.message} of every gateway that takes ${currency}`, { field: 'amount' });
  }
  if (refusal === 'CURRENCY_CONVERSION_FAILED') {
    // Every gateway was tried in every currency it takes (quote.ts chargeCurrency), so this is true as said.
    throw new AppError('CURRENCY_NOT_SUPPORTED', `No gateway takes ${currency}, and ${noRateMessage(currency, config.gateways).replace(/^No/, 'no')}`, {
      field: 'currency',
    });
  }
}

/**
 * Creates a payment intent (and finds or creates its customer) in one database
 * transaction, or in the caller's when there is one (an Idempotency-Key request
 * runs in the transaction that also stores its response): `required` joins it
 * instead of opening a savepoint, which saves two round trips per create
 * (SAVEPOINT, RELEASE; ~18% of the keyed create's statements, BENCHMARKS.md).
 * That is safe because every refusal below is decided before the first write, so
 * a refused create never leaves a write behind in the caller's transaction; keep
 * it that way (a check after a write needs the default nested savepoint).
 */
export async function createIntent(
  em: Db,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  input: CreateIntentInput,
  opts: { publicBaseUrl: string; now?: Date },
): Promise<PaymentCreatedResource> {
  const now = opts.now ?? new Date();
  return transaction(em, async (tx) => toCreated(await createWith(tx, keys, brandId, mode, input, now, await loadIntentConfig(tx)), opts.publicBaseUrl, input, mode), { join: true });
}

/** The intent as inserted and its customer's public id. */
interface Created {
  row: InsertedIntent;
  customerUuid: string | null;
}

/** Checks the create against `config` (refusals before any write), then writes the customer and the intent. */
async function createWith(tx: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, input: CreateIntentInput, now: Date, config: IntentConfig): Promise<Created> {
  await checkSomeGatewayTakes(tx, { ...config, gateways: gatewaysOfMode(config.gateways, mode) }, input.amount, input.currency);
  const expiry = resolveExpiry(config, input, now);
  const customer = input.customer ? await findOrCreateCustomer(tx, keys, brandId, mode, input.customer) : null;
  const values: IntentValues = {
    uuid: randomUUID(),
    brandId,
    mode,
    amount: input.amount,
    currency: input.currency,
    reference: input.reference ?? null,
    customerId: customer?.id ?? null,
    metadata: input.metadata ?? {},
    successUrl: input.successUrl ?? null,
    cancelUrl: input.cancelUrl ?? null,
    callbackUrl: input.callbackUrl ?? null,
  };
  const row = await insertIntent(tx, values, expiry.at ? { at: expiry.at } : { seconds: expiry.seconds! });
  return { row, customerUuid: customer?.uuid ?? null };
}

function toCreated({ row: r, customerUuid }: Created, publicBaseUrl: string, input: CreateIntentInput, mode: Mode): PaymentCreatedResource {
  return {
    payment_id: r.uuid,
    checkout_url: checkoutUrl(publicBaseUrl, r.uuid),
    status: 'pending' as const,
    amount: r.amount,
    currency: input.currency,
    reference: input.reference ?? null,
    customer_id: customerUuid,
    metadata: r.metadata,
    success_url: input.successUrl ?? null,
    cancel_url: input.cancelUrl ?? null,
    expires_at: r.expires_at.toISOString(),
    created_at: r.created_at.toISOString(),
    livemode: mode === 'live',
  };
}

export interface IntentRecord {
  id: number;
  uuid: string;
  brandId: number;
  mode: Mode;
  amount: string;
  currency: string;
  status: 'pending' | 'completed' | 'expired' | 'canceled';
  expiresAt: Date;
  successUrl: string | null;
  cancelUrl: string | null;
}

function toIntent(r: IntentRow): IntentRecord {
  return {
    id: r.id,
    uuid: r.uuid,
    brandId: r.brand_id,
    mode: r.mode,
    amount: r.amount,
    currency: r.currency,
    status: r.status,
    expiresAt: r.expires_at,
    successUrl: r.success_url,
    cancelUrl: r.cancel_url,
  };
}

/**
 * Loads an intent by internal id or public payment id; `forUpdate` locks the row.
 * The intent row is the lock every state change of a payment takes first (start,
 * complete, fail, expire), so they serialise per payment and never deadlock.
 */
export async function loadIntent(
  em: Db,
  ref: { intentId: number } | { paymentId: string },
  opts: { forUpdate?: boolean } = {},
): Promise<IntentRecord | null> {
  if (!('intentId' in ref) && !isUuid(ref.paymentId)) return null;
  const row = await intentRow(em, 'intentId' in ref ? ref : { uuid: ref.paymentId.toLowerCase() }, opts);
  return row ? toIntent(row) : null;
}

/** Moves locked, due intents and their open transactions to `expired`, with one `payment.expired` each. */
async function expireLocked(tx: Db, intentIds: number[]): Promise<void> {
  if (intentIds.length === 0) return;
  await markIntentsExpired(tx, intentIds);
  for (const id of intentIds) {
    const data = await paymentEventData(tx, id);
    const { brand_id: brandId, mode } = await intentBrandAndMode(tx, id);
    await recordEvent(tx, { brandId, mode, event: 'payment.expired', data, transactionId: (data.transaction_id as number | null) ?? null });
  }
}

/**
 * Expires up to `limit` intents past their `expires_at` (oldest first). Rows another
 * worker holds are skipped, so several workers can run this at once. Returns the
 * number expired; call again until it returns less than `limit`.
 */
export async function expireDueIntents(em: Db, opts: { limit?: number } = {}): Promise<number> {
  return transaction(em, async (tx) => {
    const ids = await lockDueIntents(tx, opts.limit ?? 100);
    await expireLocked(tx, ids);
    return ids.length;
  });
}

