import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { PersonalDataKeys } from '../../server/domain/customers/keys.ts';
import { normalizePhone } from '../../server/domain/customers/normalize.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../../server/domain/customers/service.ts';
import { hashFingerprint, signDeviceToken, type DeviceTokenKeys } from '../../server/domain/devices/tokens.ts';
import { createGateway } from '../../server/domain/gateways/service.ts';
import { defaultGatewayTemplates } from '../../server/domain/sms/templates/presets/index.ts';
import { putEndpoint } from '../../server/domain/webhooks/endpoints.ts';
import { blindIndex } from '../../server/infra/crypto/blind-index.ts';
import { generateApiKey } from '../../server/infra/crypto/tokens.ts';
import type { Db } from '../../server/domain/db.ts';

/**
 * Benchmark data, written set-based (INSERT ... SELECT over generate_series or
 * unnest of arrays) so 100k rows take seconds, yet real: customers carry
 * AES-GCM tokens and blind indexes made by the service's own functions with
 * the run's keys, API keys are stored as the service stores them (SHA-256),
 * gateways go through the gateway service (templates compiled and checked).
 */

export interface SeededBrand {
  id: number;
  apiKey: string;
}

export interface SeededGateways {
  manual: { id: number; code: string };
  sandbox: { id: number; code: string };
}

export interface SeededCustomer {
  brandIndex: number;
  email: string;
  phone: string;
}

/** How the transactions are spread: a merchant's history, or a backlog of open ones waiting for SMS. */
export type TransactionMix = 'history' | 'open';

export interface SeededPayment {
  brandIndex: number;
  paymentId: string;
  transactionId: number | null;
  status: string | null;
  amount: string;
  gatewayTrxId: string | null;
  /** The customer's phone in E.164, when listPayments was given the keys. */
  customerPhone?: string | null;
}

export async function withPool<T>(url: string, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

export async function seedBrands(pool: pg.Pool, count: number): Promise<SeededBrand[]> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO brands (uuid, name) SELECT gen_random_uuid(), 'Bench brand ' || g FROM generate_series(1, $1) g RETURNING id`,
    [count],
  );
  const ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  const keys = ids.map(() => generateApiKey('live'));
  await pool.query(
    `INSERT INTO api_keys (brand_id, name, prefix, key_hash)
     SELECT b, 'bench key', p, h FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(b, p, h)`,
    [ids, keys.map((k) => k.prefix), keys.map((k) => k.hash)],
  );
  return ids.map((id, i) => ({ id, apiKey: keys[i]!.key }));
}

/** A manual bKash-like wallet (its real SMS sender and template) and the automatic sandbox gateway. */
export async function seedGateways(db: Db): Promise<SeededGateways> {
  const em = db;
  const manual = await createGateway(em, {
    code: 'bkash',
    name: 'bKash',
    type: 'manual',
    methods: ['send_money'],
    currencies: ['BDT'],
    min_amount: '10.00',
    max_amount: '25000.00',
    fee_percent: '1.85',
    receiving_account: '01700000000',
    sms_senders: [...defaultGatewayTemplates.bkash.senders],
    sms_templates: defaultGatewayTemplates.bkash.templates.map((t) => ({ ...t })),
  });
  const sandbox = await createGateway(em, {
    code: 'sandbox',
    name: 'Sandbox',
    type: 'automatic',
    methods: ['card'],
    currencies: ['BDT', 'USD'],
    min_amount: '1.00',
    fee_percent: '2.5',
    fee_fixed: '0.30',
    sort_order: 1,
  });
  return { manual: { id: manual.id, code: manual.code }, sandbox: { id: sandbox.id, code: sandbox.code } };
}

const CHUNK = 5000;

/**
 * `count` customers spread round-robin over the brands, each with name, email
 * and phone encrypted and both blind indexes, exactly as findOrCreateCustomer
 * stores them. Returns their identifiers in clear (the lookups' inputs).
 */
export async function seedCustomers(pool: pg.Pool, keys: PersonalDataKeys, brands: readonly SeededBrand[], count: number): Promise<SeededCustomer[]> {
  const out: SeededCustomer[] = [];
  for (let start = 0; start < count; start += CHUNK) {
    const cols = { uuid: [] as string[], brand: [] as number[], name: [] as string[], email: [] as string[], phone: [] as string[], emailHash: [] as string[], phoneHash: [] as string[] };
    for (let i = start; i < Math.min(count, start + CHUNK); i++) {
      const brandIndex = i % brands.length;
      const email = `customer${i}@bench.example`;
      const phone = normalizePhone(`+88017${String(i).padStart(8, '0')}`);
      if (!phone) throw new Error(`seed phone ${i} is not a valid number`);
      const brandId = brands[brandIndex]!.id;
      const uuid = randomUUID();
      const b = customerBinding(brandId, uuid);
      cols.uuid.push(uuid);
      cols.brand.push(brandId);
      cols.name.push(keys.pii.encrypt(`Customer ${i}`, CUSTOMER_CONTEXT.name, b));
      cols.email.push(keys.pii.encrypt(email, CUSTOMER_CONTEXT.email, b));
      cols.phone.push(keys.pii.encrypt(phone, CUSTOMER_CONTEXT.phone, b));
      cols.emailHash.push(blindIndex(keys.blindIndexKey, brandId, 'email', email));
      cols.phoneHash.push(blindIndex(keys.blindIndexKey, brandId, 'phone', phone));
      out.push({ brandIndex, email, phone });
    }
    await pool.query(
      `INSERT INTO customers (uuid, brand_id, name_encrypted, email_encrypted, phone_encrypted, email_hash, phone_hash, created_at)
       SELECT u, b, n, e, p, eh, ph, now() - random() * interval '90 days'
         FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS x(u, b, n, e, p, eh, ph)`,
      [cols.uuid, cols.brand, cols.name, cols.email, cols.phone, cols.emailHash, cols.phoneHash],
    );
  }
  return out;
}

/**
 * One payment intent per customer (the customer's brand), each with one
 * transaction on the manual gateway, except every 20th in `history`, which
 * stays a bare intent (the intent form of the payment view).
 *
 * Amounts are distinct within a brand (100.00 + position, with varying cents),
 * so an SMS naming an amount has exactly one candidate.
 *
 * - `history`: 70 % completed, 10 % awaiting verification, 10 % pending, 10 % failed,
 *   created over the last 90 days.
 * - `open`: every transaction `awaiting_verification` (the customer typed the
 *   gateway trx id at checkout: only such a payment can be completed by an SMS
 *   on its own, docs/matching.md), created within the last 10 hours (inside the
 *   SMS matching window), and intents expiring in a week (the expiry sweep must
 *   not take them mid-run).
 */
export async function seedPayments(pool: pg.Pool, gateways: SeededGateways, mix: TransactionMix): Promise<void> {
  const history = mix === 'history';
  await pool.query(
    `WITH src AS (
       SELECT c.id AS customer_id, c.brand_id, (row_number() OVER (PARTITION BY c.brand_id ORDER BY c.id) - 1) AS k FROM customers c
     )
     INSERT INTO payment_intents (uuid, brand_id, amount, currency, reference, customer_id, metadata, status, expires_at, completed_at, created_at)
     SELECT gen_random_uuid(), brand_id, round(100 + k + (k * 37 % 100) / 100.0, 2), 'BDT', 'order-' || customer_id, customer_id,
            jsonb_build_object('order_id', customer_id, 'channel', 'web'),
            CASE WHEN $1 AND customer_id % 10 < 7 AND customer_id % 20 <> 0 THEN 'completed' ELSE 'pending' END,
            now() + interval '7 days',
            CASE WHEN $1 AND customer_id % 10 < 7 AND customer_id % 20 <> 0 THEN now() - (customer_id % 1000) * interval '1 minute' END,
            CASE WHEN $1 THEN now() - (customer_id % 1000) * interval '1 minute' - interval '1 day' * (customer_id % 90)
                 ELSE now() - (k % 600) * interval '1 minute' - interval '1 minute' END
       FROM src ORDER BY customer_id`,
    [history],
  );
  await pool.query(
    `WITH src AS (
       SELECT i.*, (row_number() OVER (PARTITION BY i.brand_id ORDER BY i.id) - 1) AS k FROM payment_intents i
     ), typed AS (
       SELECT src.*,
              CASE WHEN $1 THEN (CASE WHEN customer_id % 10 < 7 THEN 'completed' WHEN customer_id % 10 = 7 THEN 'awaiting_verification'
                                      WHEN customer_id % 10 = 8 THEN 'pending' ELSE 'failed' END)
                   ELSE 'awaiting_verification' END AS tstatus
         FROM src WHERE NOT ($1 AND customer_id % 20 = 0)
     )
     INSERT INTO transactions (brand_id, intent_id, trx_id, gateway_id, method, gateway_trx_id, amount, currency, fee, status,
                               failure_reason, completion_source, created_at, completed_at)
     SELECT brand_id, id, 'TRX' || upper(lpad(to_hex(id), 16, '0')), $2, 'send_money',
            CASE WHEN tstatus = 'pending' THEN NULL ELSE 'B' || upper(lpad(to_hex(id), 9, '0')) END,
            amount, 'BDT', round(amount * 0.0185, 2), tstatus,
            CASE WHEN tstatus = 'failed' THEN 'customer cancelled' END,
            CASE WHEN tstatus = 'completed' THEN 'sms' END,
            created_at, CASE WHEN tstatus = 'completed' THEN completed_at END
       FROM typed ORDER BY id`,
    [history, gateways.manual.id],
  );
  await pool.query('ANALYZE');
}

/**
 * Every payment with what a load generator needs to address it (brand index, amount, claimed trx id).
 * With `keys`, also its customer's phone in clear (an SMS's payer must agree with it, docs/matching.md).
 */
export async function listPayments(pool: pg.Pool, brands: readonly SeededBrand[], keys?: PersonalDataKeys): Promise<SeededPayment[]> {
  const indexOf = new Map(brands.map((b, i) => [b.id, i]));
  const { rows } = await pool.query<{
    uuid: string; brand_id: string; transaction_id: string | null; status: string | null; amount: string; gateway_trx_id: string | null;
    customer_uuid: string | null; phone_encrypted: string | null;
  }>(
    `SELECT i.uuid, i.brand_id, t.id AS transaction_id, t.status, i.amount::text AS amount, t.gateway_trx_id, c.uuid AS customer_uuid, c.phone_encrypted
       FROM payment_intents i LEFT JOIN transactions t ON t.intent_id = i.id LEFT JOIN customers c ON c.id = i.customer_id ORDER BY i.id`,
  );
  return rows.map((r) => ({
    brandIndex: indexOf.get(Number(r.brand_id))!,
    paymentId: r.uuid,
    transactionId: r.transaction_id === null ? null : Number(r.transaction_id),
    status: r.status,
    amount: r.amount,
    gatewayTrxId: r.gateway_trx_id,
    customerPhone:
      keys && r.phone_encrypted && r.customer_uuid ? keys.pii.decrypt(r.phone_encrypted, CUSTOMER_CONTEXT.phone, customerBinding(Number(r.brand_id), r.customer_uuid)) : null,
  }));
}

export interface SeededDevice {
  brandIndex: number;
  deviceId: number;
  accessToken: string;
}

/** `perBrand` paired, active devices per brand, with access tokens signed by the run's JWT key. */
export async function seedDevices(pool: pg.Pool, jwt: DeviceTokenKeys, brands: readonly SeededBrand[], perBrand: number): Promise<SeededDevice[][]> {
  const uuids = brands.flatMap(() => Array.from({ length: perBrand }, () => randomUUID()));
  const brandIds = brands.flatMap((b) => Array.from({ length: perBrand }, () => b.id));
  const fingerprints = uuids.map(() => hashFingerprint(randomBytes(32).toString('hex')));
  const { rows } = await pool.query<{ id: string; uuid: string }>(
    `INSERT INTO devices (uuid, brand_id, name, fingerprint_hash, last_seen_at)
     SELECT u, b, 'Bench phone', f, now() FROM unnest($1::uuid[], $2::bigint[], $3::text[]) AS x(u, b, f) RETURNING id, uuid`,
    [uuids, brandIds, fingerprints],
  );
  const idOf = new Map(rows.map((r) => [r.uuid, Number(r.id)]));
  return brands.map((_, bi) =>
    uuids.slice(bi * perBrand, (bi + 1) * perBrand).map((uuid) => ({ brandIndex: bi, deviceId: idOf.get(uuid)!, accessToken: signDeviceToken(jwt, 'access', uuid).token })),
  );
}

/** The brand's webhook endpoint (created through the service, so its secret is encrypted as in production). */
export async function seedWebhookEndpoint(db: Db, keys: PersonalDataKeys, brandId: number, url: string): Promise<string> {
  const { secret } = await putEndpoint(
    db,
    keys.pii,
    { brandId, mode: 'live' },
    { url, events: ['payment.completed', 'payment.failed', 'payment.expired', 'refund.completed', 'refund.failed'], enabled: true },
    { allowPrivate: true },
  );
  if (!secret) throw new Error('endpoint already existed');
  return secret;
}
