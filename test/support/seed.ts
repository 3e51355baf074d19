import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestContext } from './harness.ts';
import { createGateway, type GatewayInput, type GatewayView } from '../../server/domain/gateways/service.ts';
import { setExchangeRate } from '../../server/domain/fx/service.ts';
import { setSetting, type SettingKey } from '../../server/domain/settings/service.ts';
import { defaultGatewayTemplates } from '../../server/domain/sms/templates/presets/index.ts';
import {
  completeTransaction,
  failTransaction,
  getTransaction,
  startTransaction,
  type TransactionRecord,
} from '../../server/domain/payments/transactions.ts';
import { completeRefund, failRefund } from '../../server/domain/refunds/service.ts';

/**
 * Seeding helpers for integration tests of every area. They go through the real
 * services (gateways, rates, transactions) or the real HTTP API (payments,
 * refunds), so seeded data obeys the same rules as production data.
 */

type Ctx = Pick<TestContext, 'runtime' | 'request'>;

const em = (t: Pick<TestContext, 'runtime'>) => t.runtime.deps.db;
const suffix = () => randomBytes(3).toString('hex');

/** Realistic gateway settings; each preset gets a unique code unless one is given. */
export const gatewayPresets = {
  /** Manual bKash-like wallet: BDT 10..25,000, 1.85 % fee, bKash SMS template. */
  bkash: (): GatewayInput => ({
    code: `bkash-${suffix()}`,
    name: 'bKash',
    type: 'manual',
    methods: ['send_money'],
    currencies: ['BDT'],
    min_amount: '10.00',
    max_amount: '25000.00',
    fee_percent: '1.85',
    fee_fixed: '0.00',
    receiving_account: '01700000000',
    instructions: 'Send Money to the number above, then enter the TrxID.',
    sms_senders: [...defaultGatewayTemplates.bkash.senders],
    sms_templates: defaultGatewayTemplates.bkash.templates.map((t) => ({ ...t })),
  }),
  nagad: (): GatewayInput => ({
    code: `nagad-${suffix()}`,
    name: 'Nagad',
    type: 'manual',
    methods: ['send_money'],
    currencies: ['BDT'],
    min_amount: '10.00',
    max_amount: '25000.00',
    fee_percent: '1.50',
    receiving_account: '01800000000',
    sms_senders: [...defaultGatewayTemplates.nagad.senders],
    sms_templates: defaultGatewayTemplates.nagad.templates.map((t) => ({ ...t })),
  }),
  rocket: (): GatewayInput => ({
    code: `rocket-${suffix()}`,
    name: 'Rocket',
    type: 'manual',
    methods: ['send_money'],
    currencies: ['BDT'],
    min_amount: '10.00',
    max_amount: '25000.00',
    fee_percent: '1.80',
    receiving_account: '019000000001',
    sms_senders: [...defaultGatewayTemplates.rocket.senders],
    sms_templates: defaultGatewayTemplates.rocket.templates.map((t) => ({ ...t })),
  }),
  /** Automatic redirect gateway (the checkout's sandbox), USD and BDT, no limits above. */
  sandbox: (): GatewayInput => ({
    code: `sandbox-${suffix()}`,
    name: 'Sandbox',
    type: 'automatic',
    methods: ['card'],
    currencies: ['BDT', 'USD'],
    min_amount: '1.00',
    max_amount: null,
    fee_percent: '2.5',
    fee_fixed: '0.30',
  }),
} as const;

export type GatewayPreset = keyof typeof gatewayPresets;

/** Creates a gateway from a preset (default `bkash`) with overrides; returns it. */
export async function seedGateway(t: Pick<TestContext, 'runtime'>, preset: GatewayPreset = 'bkash', overrides: Partial<GatewayInput> = {}): Promise<GatewayView> {
  return createGateway(em(t), { ...gatewayPresets[preset](), ...overrides });
}

/** 1 `base` = `rate` `quote`. */
export async function seedRate(t: Pick<TestContext, 'runtime'>, base: string, quote: string, rate: string): Promise<void> {
  await setExchangeRate(em(t), { base, quote, rate });
}

export async function seedSetting(t: Pick<TestContext, 'runtime'>, key: SettingKey, value: unknown): Promise<void> {
  await setSetting(em(t), key, value);
}

export interface CreatePaymentOptions {
  amount?: string;
  currency?: string;
  /** A random `order-…` unless given; `null` sends none. */
  reference?: string | null;
  customer?: { name?: string; email?: string; phone?: string };
  metadata?: Record<string, unknown>;
  expires_in?: number;
  success_url?: string;
  cancel_url?: string;
  /** Anything else the merchant API takes (or should refuse). */
  [field: string]: unknown;
}

/** POST /api/v1/payments as the merchant would; asserts the 201 and returns `data`. */
export async function createPayment(t: Ctx, apiKey: string, body: CreatePaymentOptions = {}): Promise<{ payment_id: string; checkout_url: string; expires_at: string; amount: string; currency: string }> {
  const res = await t.request('POST', '/api/v1/payments', {
    token: apiKey,
    body: Object.fromEntries(Object.entries({ amount: '500.00', currency: 'BDT', reference: `order-${suffix()}`, ...body }).filter(([, v]) => v !== null)),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

export type SeedStatus = 'pending' | 'processing' | 'awaiting_verification' | 'completed' | 'failed';

/**
 * A payment with one transaction on `gateway` in the given status (default
 * `completed`), created through the merchant API and the payment services.
 * Manual gateways get a gateway trx id (default a random one) unless status is `pending`.
 */
export async function seedTransaction(
  t: Ctx,
  opts: {
    apiKey: string;
    gateway: GatewayView;
    status?: SeedStatus;
    amount?: string;
    currency?: string;
    gatewayTrxId?: string | null;
    senderNumber?: string;
    customer?: CreatePaymentOptions['customer'];
    /** Backdates the transaction (its creation, and its completion when completed) to this moment. */
    at?: Date;
  },
): Promise<{ paymentId: string; transaction: TransactionRecord }> {
  const status = opts.status ?? 'completed';
  const payment = await createPayment(t, opts.apiKey, {
    amount: opts.amount ?? '500.00',
    currency: opts.currency ?? opts.gateway.currencies[0],
    customer: opts.customer,
  });
  const manual = opts.gateway.type === 'manual';
  const gatewayTrxId = opts.gatewayTrxId !== undefined ? opts.gatewayTrxId : manual && status !== 'pending' ? `TX${suffix().toUpperCase()}${suffix().toUpperCase()}` : null;
  const started = await startTransaction(em(t), t.runtime.deps.crypto, {
    paymentId: payment.payment_id,
    gatewayCode: opts.gateway.code,
    gatewayTrxId,
    senderNumber: opts.senderNumber,
  });
  if (status === 'completed') await completeTransaction(em(t), started.id, { source: 'admin' });
  if (status === 'failed') await failTransaction(em(t), started.id, { reason: 'seeded failure' });
  if (opts.at) {
    await sql`UPDATE transactions SET created_at = ${opts.at}, completed_at = CASE WHEN completed_at IS NULL THEN NULL ELSE ${opts.at}::timestamptz END WHERE id = ${started.id}`.execute(em(t));
  }
  return { paymentId: payment.payment_id, transaction: await getTransaction(em(t), started.id) };
}

/** A completed transaction: shorthand for `seedTransaction` with status `completed`. */
export function seedCompletedTransaction(t: Ctx, opts: Omit<Parameters<typeof seedTransaction>[1], 'status'>) {
  return seedTransaction(t, { ...opts, status: 'completed' });
}

/** POST /api/v1/refunds; returns the raw response (tests assert on failures too). */
export function requestRefund(t: Ctx, apiKey: string, body: { trx_id: string; amount: string; reason?: string }, headers: Record<string, string> = {}) {
  return t.request('POST', '/api/v1/refunds', { token: apiKey, body, headers });
}

/** Moves a pending refund to `completed` or `failed` through the refund service. */
export async function settleRefund(t: Pick<TestContext, 'runtime'>, refundId: number, to: 'completed' | 'failed'): Promise<void> {
  if (to === 'completed') await completeRefund(em(t), refundId);
  else await failRefund(em(t), refundId, { reason: 'seeded failure' });
}
