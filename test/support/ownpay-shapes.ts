import { expect } from 'vitest';

/**
 * OwnPay's published request and response shapes, transcribed field by field
 * (name and JSON type; `|null` where they publish `nullable: true`). Each
 * names the public file it comes from:
 *
 * - own-pay/OwnPay-Documentation `api/merchant_api.yaml`, `components.schemas.<name>`
 * - own-pay/ownpay-nodejs `src/core/types.ts`, `interface <name>`
 *
 * A response must have every field with its type; members beyond them are
 * allowed (their clients ignore what they do not read).
 */
type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';
export type Shape = Record<string, `${Kind}` | `${Kind}|null`>;

export const ownpayShapes = {
  /** merchant_api.yaml `InitiatePaymentResponse.data`; ownpay-nodejs types.ts `PaymentIntent`. */
  InitiatePaymentResponse: { payment_id: 'string', token: 'string', checkout_url: 'string', status: 'string' },
  /** merchant_api.yaml `PaymentDetailsResponse.data`; ownpay-nodejs types.ts `Payment` (fee: string). */
  PaymentDetailsResponse: {
    id: 'integer|null',
    trx_id: 'string|null',
    gateway_trx_id: 'string|null',
    amount: 'string',
    currency: 'string',
    fee: 'string',
    status: 'string',
    gateway: 'string|null',
    method: 'string|null',
    reference: 'string|null',
    created_at: 'string',
    completed_at: 'string|null',
    customer: 'object|null',
  },
  /** merchant_api.yaml `TransactionResponse.data`; ownpay-nodejs types.ts `Transaction`. */
  Transaction: {
    id: 'integer',
    trx_id: 'string',
    gateway_trx_id: 'string|null',
    amount: 'string',
    currency: 'string',
    fee: 'string',
    net_amount: 'string|null',
    status: 'string',
    gateway: 'string|null',
    method: 'string|null',
    reference: 'string|null',
    created_at: 'string',
    updated_at: 'string|null',
  },
  /** merchant_api.yaml `PaginatedTransactionsResponse` (meta: page, per_page, total, total_pages). */
  PaginatedTransactionsResponse: { success: 'boolean', data: 'array', meta: 'object' },
  /** merchant_api.yaml `RefundResponse.data`; ownpay-nodejs types.ts `Refund`. */
  Refund: {
    id: 'integer|null',
    uuid: 'string|null',
    transaction_id: 'integer|null',
    trx_id: 'string|null',
    gateway_trx_id: 'string|null',
    amount: 'string',
    reason: 'string|null',
    status: 'string',
    processed_at: 'string|null',
    created_at: 'string',
  },
  /** merchant_api.yaml `CreateCustomerResponse.data`. */
  CreateCustomerResponse: { id: 'integer', uuid: 'string' },
  /** merchant_api.yaml `HealthCheckResponse.data` (mobile: connected, active_devices). */
  HealthCheck: { status: 'string', version: 'string', db: 'string', mobile: 'object', gateways: 'integer', customers: 'integer', time: 'string' },
  /** merchant_api.yaml `ApiSingleErrorResponse` / `ApiErrorsResponse` (errors[]: code, message, field). */
  Error: { success: 'boolean', error: 'string', errors: 'array', request_id: 'string' },
} satisfies Record<string, Shape>;

function kindOf(v: unknown): Kind | 'null' | 'undefined' {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v as Kind;
}

/** Fails naming every field that is missing or of another type. */
export function expectOwnpayShape(value: unknown, shape: Shape): void {
  expect(kindOf(value)).toBe('object');
  const obj = value as Record<string, unknown>;
  const wrong: string[] = [];
  for (const [field, spec] of Object.entries(shape)) {
    const allowed = spec.split('|');
    const k = kindOf(obj[field]);
    const ok = allowed.includes(k) || (k === 'integer' && allowed.includes('number'));
    if (!ok) wrong.push(`${field}: ${k} (want ${spec})`);
  }
  expect(wrong, JSON.stringify(value)).toEqual([]);
}
