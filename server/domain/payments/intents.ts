import { randomUUID } from 'node:crypto';
import { AppError, errorRegistry } from '../../../contract/common/errors.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import { AMOUNT_MAXIMUM_MESSAGE } from '../../../contract/common/money.ts';
import type { PaymentCreatedResource } from '../../../contract/merchant/payments.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { findOrCreateCustomer, type CustomerInput } from '../customers/service.ts';
import { grouped } from '../../infra/database/grouped.ts';
import { POOL_ACQUIRE_TIMEOUT_MS } from '../../infra/database/orm.ts';
import { intentRefusal, noRateMessage, quoteGatewaysOf } from '../gateways/quote.ts';
import { gatewaysOfMode } from '../sandbox/gateway.ts';
import { COLUMNS as GATEWAY_COLUMNS, toGatewayView, type GatewayRow, type GatewayView } from '../gateways/service.ts';
import { parseStored } from '../settings/service.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { OPEN_TRANSACTION_STATUSES } from './entities.ts';
import { pgDate } from '../../infra/database/pg-date.ts';
import { paymentEventData } from './view.ts';

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
}

function checkoutUrl(publicBaseUrl: string, paymentId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/checkout/${paymentId}`;
}

/** The configuration every intent creation reads: the enabled gateways and the default expiry. */
export interface IntentConfig {
  gateways: readonly GatewayView[];
  expiryMinutes: number;
}

/** Both in one statement: the setting rides on every gateway row (one row of nulls when no gateway is enabled). */
async function loadIntentConfig(em: EntityManager): Promise<IntentConfig> {
  const rows = await em.execute<Array<GatewayRow & { expiry_setting: unknown }>>(
    `SELECT s.value AS expiry_setting, g.*
       FROM (SELECT (SELECT value FROM settings WHERE key = 'intent_expiry_minutes') AS value) s
       LEFT JOIN LATERAL (SELECT ${GATEWAY_COLUMNS} FROM gateways WHERE enabled) g ON true
      ORDER BY g.sort_order, g.id`,
  );
  return {
    gateways: rows.filter((r) => r.id !== null).map(toGatewayView),
    expiryMinutes: parseStored('intent_expiry_minutes', rows[0]?.expiry_setting ?? undefined),
  };
}

/**
 * `loadIntentConfig` for concurrent creates, grouped (infra/database/grouped.ts):
 * creates arriving while a read is in flight share the next one, which runs on
 * the transaction of the first of them. When idle a create reads at once.
 *
 * Why: these were two of a keyed create's nine round trips (now one statement) (BENCHMARKS.md). Not a
 * cache: each create still reads with a statement that starts after it arrived,
 * so a gateway disabled or a setting changed before a request is seen by it, in
 * every process. Running it on one waiting create's transaction gives the others
 * the same answer they would read themselves (read committed: each statement
 * takes its own snapshot, and a create writes neither gateways nor settings
 * before this read) and needs no extra pool connection: a read on a connection
 * of its own could wait for the pool while every connection is held by a
 * transaction waiting for that read.
 */
export function groupedIntentConfig(): (tx: EntityManager) => Promise<IntentConfig> {
  return grouped(async (txs: EntityManager[]) => {
    const config = await loadIntentConfig(txs[0]!);
    return txs.map(() => config);
  }, { maxBatch: 1000, queueTimeoutMs: POOL_ACQUIRE_TIMEOUT_MS, concurrency: 2 });
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
async function checkSomeGatewayTakes(em: EntityManager, config: IntentConfig, amount: string, currency: string): Promise<void> {
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
  em: EntityManager,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  input: CreateIntentInput,
  opts: { publicBaseUrl: string; now?: Date; config?: (tx: EntityManager) => Promise<IntentConfig> },
): Promise<PaymentCreatedResource> {
  const now = opts.now ?? new Date();
  return em.transactional(async (tx) => {
    const config = await (opts.config ?? loadIntentConfig)(tx);
    await checkSomeGatewayTakes(tx, { ...config, gateways: gatewaysOfMode(config.gateways, mode) }, input.amount, input.currency);
    const expiry = resolveExpiry(config, input, now);
    const customer = input.customer ? await findOrCreateCustomer(tx, keys, brandId, mode, input.customer) : null;
    const rows = await tx.execute<Array<{ uuid: string; amount: string; metadata: Record<string, unknown>; created_at: string; expires_at: string }>>(
      `INSERT INTO payment_intents (uuid, brand_id, mode, amount, currency, reference, customer_id, metadata, success_url, cancel_url, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, COALESCE(?::timestamptz, now() + make_interval(secs => ?)))
       RETURNING uuid, amount::text AS amount, metadata, created_at, expires_at`,
      [
        randomUUID(),
        brandId,
        mode,
        input.amount,
        input.currency,
        input.reference ?? null,
        customer?.id ?? null,
        JSON.stringify(input.metadata ?? {}),
        input.successUrl ?? null,
        input.cancelUrl ?? null,
        expiry.at,
        expiry.seconds,
      ],
    );
    const r = rows[0]!;
    return {
      payment_id: r.uuid,
      checkout_url: checkoutUrl(opts.publicBaseUrl, r.uuid),
      status: 'pending' as const,
      amount: r.amount,
      currency: input.currency,
      reference: input.reference ?? null,
      customer_id: customer?.uuid ?? null,
      metadata: r.metadata,
      success_url: input.successUrl ?? null,
      cancel_url: input.cancelUrl ?? null,
      expires_at: pgDate(r.expires_at).toISOString(),
      created_at: pgDate(r.created_at).toISOString(),
      livemode: mode === 'live',
    };
  }, { propagation: 'required' });
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

interface IntentRow {
  id: string;
  uuid: string;
  brand_id: string;
  mode: Mode;
  amount: string;
  currency: string;
  status: IntentRecord['status'];
  expires_at: string | Date;
  success_url: string | null;
  cancel_url: string | null;
}

const INTENT_COLUMNS = 'id, uuid, brand_id, mode, amount::text AS amount, currency, status, expires_at, success_url, cancel_url';

function toIntent(r: IntentRow): IntentRecord {
  return {
    id: Number(r.id),
    uuid: r.uuid,
    brandId: Number(r.brand_id),
    mode: r.mode,
    amount: r.amount,
    currency: r.currency,
    status: r.status,
    expiresAt: pgDate(r.expires_at),
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
  em: EntityManager,
  ref: { intentId: number } | { paymentId: string },
  opts: { forUpdate?: boolean } = {},
): Promise<IntentRecord | null> {
  const lock = opts.forUpdate ? ' FOR UPDATE' : '';
  if ('intentId' in ref) {
    const rows = await em.execute<IntentRow[]>(`SELECT ${INTENT_COLUMNS} FROM payment_intents WHERE id = ?${lock}`, [ref.intentId]);
    return rows[0] ? toIntent(rows[0]) : null;
  }
  if (!isUuid(ref.paymentId)) return null;
  const rows = await em.execute<IntentRow[]>(`SELECT ${INTENT_COLUMNS} FROM payment_intents WHERE uuid = ?${lock}`, [ref.paymentId.toLowerCase()]);
  return rows[0] ? toIntent(rows[0]) : null;
}

/** Moves locked, due intents and their open transactions to `expired`, with one `payment.expired` each. */
async function expireLocked(tx: EntityManager, intentIds: number[]): Promise<void> {
  if (intentIds.length === 0) return;
  await tx.execute(
    `UPDATE payment_intents SET status = 'expired', expired_at = now(), updated_at = now() WHERE id IN (?) AND status = 'pending'`,
    [intentIds],
  );
  await tx.execute(
    `UPDATE transactions SET status = 'expired', updated_at = now() WHERE intent_id IN (?) AND status IN (?)`,
    [intentIds, [...OPEN_TRANSACTION_STATUSES]],
  );
  for (const id of intentIds) {
    const data = await paymentEventData(tx, id);
    const { brand_id: brandId, mode } = (await tx.execute<Array<{ brand_id: string; mode: Mode }>>('SELECT brand_id, mode FROM payment_intents WHERE id = ?', [id]))[0]!;
    await recordEvent(tx, { brandId: Number(brandId), mode, event: 'payment.expired', data, transactionId: (data.transaction_id as number | null) ?? null });
  }
}

/**
 * Expires up to `limit` intents past their `expires_at` (oldest first). Rows another
 * worker holds are skipped, so several workers can run this at once. Returns the
 * number expired; call again until it returns less than `limit`.
 */
export async function expireDueIntents(em: EntityManager, opts: { limit?: number } = {}): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await tx.execute<Array<{ id: string }>>(
      `SELECT id FROM payment_intents WHERE status = 'pending' AND expires_at <= now()
        ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED`,
      [opts.limit ?? 100],
    );
    const ids = rows.map((r) => Number(r.id));
    await expireLocked(tx, ids);
    return ids.length;
  });
}

