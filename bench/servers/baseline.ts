import type { AddressInfo } from 'node:net';
import { createHash, randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import pg from 'pg';
import { loadPersonalDataKeys } from '../../server/domain/customers/keys.ts';
import { isEmailIdentifier, normalizeEmail, normalizePhone } from '../../server/domain/customers/normalize.ts';
import { blindIndex } from '../../server/infra/crypto/blind-index.ts';
import { baselineSmsRoute } from './baseline-sms.ts';

/**
 * The physical floor of this stack: Express 5 and `pg`, the same rows and
 * indexes, the same auth lookup by key hash, the same JSON, and nothing else:
 * no contract validation, no ORM, no request log, no rate limiter, no
 * idempotency. One hand-written query per thing to find (the payment view
 * joins its customer instead of a second round trip). What ours does beyond
 * this is the price of its framework layers and features.
 */
const keys = loadPersonalDataKeys({ piiEncryptionKeys: process.env.PII_ENCRYPTION_KEYS!, blindIndexKey: process.env.BLIND_INDEX_KEY! });
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX ?? 10) });
const publicBaseUrl = process.env.PUBLIC_BASE_URL ?? 'http://127.0.0.1:3000';

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.json({ limit: 102_400 }));

const notFound = (res: Response, code: string, message: string) => res.status(404).json({ success: false, error: { code, message } });
const unauthorized = (res: Response) => res.status(401).json({ success: false, error: { code: 'UNAUTHORIZED', message: 'Unauthorized' } });

/** The same work as authenticateApiKeyHashes (server/domain/brands/service.ts): lookup by SHA-256, and a conditional touch of last_used_at once a minute. */
async function merchant(req: Request): Promise<Scope | null> {
  const m = /^Bearer ([ps]k_(?:live|test)_[0-9A-Za-z]{32,64})$/.exec(req.get('authorization') ?? '');
  if (!m) return null;
  const { rows } = await pool.query<{ id: string; brand_id: string; mode: 'live' | 'test'; stale: boolean }>(
    `SELECT k.id, k.brand_id, k.mode, (k.last_used_at IS NULL OR k.last_used_at < now() - interval '60 seconds') AS stale
       FROM api_keys k JOIN brands b ON b.id = k.brand_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND b.status = 'active'`,
    [createHash('sha256').update(m[1]!).digest('hex')],
  );
  if (rows[0]?.stale) {
    await pool.query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')`, [rows[0].id]);
  }
  return rows[0] ? { brandId: Number(rows[0].brand_id), mode: rows[0].mode } : null;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const trim = (s: string | null) => (s !== null && s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The key's brand and mode: like ours, every read and write is scoped to both. */
interface Scope {
  brandId: number;
  mode: 'live' | 'test';
}
type Handler = (req: Request, res: Response, scope: Scope) => Promise<unknown>;
const withMerchant = (fn: Handler) => async (req: Request, res: Response, next: NextFunction) => {
  try {
    const scope = await merchant(req);
    if (scope === null) return unauthorized(res);
    await fn(req, res, scope);
  } catch (err) {
    next(err);
  }
};

app.get(
  '/api/v1/payments/:id',
  withMerchant(async (req, res, { brandId, mode }) => {
    const id = String(req.params.id);
    if (!UUID_RE.test(id)) return notFound(res, 'PAYMENT_NOT_FOUND', 'Payment not found');
    const { rows } = await pool.query(
      `SELECT i.id AS intent_id, i.uuid, i.amount::text AS intent_amount, i.currency AS intent_currency, i.reference, i.metadata,
              i.status AS intent_status, i.expires_at, i.created_at AS intent_created_at,
              t.id AS transaction_id, t.trx_id, t.gateway_trx_id, t.amount::text AS amount, t.currency, t.fee::text AS fee,
              t.exchange_rate::text AS exchange_rate, t.status, g.code AS gateway, t.method, t.failure_reason, t.created_at, t.completed_at,
              c.id AS customer_id, c.uuid AS customer_uuid, c.name_encrypted, c.email_encrypted
         FROM payment_intents i
         LEFT JOIN LATERAL (SELECT * FROM transactions tt WHERE tt.intent_id = i.id ORDER BY tt.created_at DESC, tt.id DESC LIMIT 1) t ON true
         LEFT JOIN gateways g ON g.id = t.gateway_id
         LEFT JOIN customers c ON c.id = i.customer_id
        WHERE i.uuid = $1 AND i.brand_id = $2 AND i.mode = $3`,
      [id.toLowerCase(), brandId, mode],
    );
    const r = rows[0];
    if (!r) return notFound(res, 'PAYMENT_NOT_FOUND', 'Payment not found');
    const customer =
      r.customer_id === null
        ? null
        : {
            name: r.name_encrypted === null ? null : keys.pii.decrypt(r.name_encrypted, 'customer.name', { brandId, row: r.customer_uuid }),
            email: r.email_encrypted === null ? null : keys.pii.decrypt(r.email_encrypted, 'customer.email', { brandId, row: r.customer_uuid }),
          };
    const base = {
      payment_id: r.uuid,
      reference: r.reference,
      requested_amount: r.intent_amount,
      requested_currency: r.intent_currency,
      expires_at: iso(r.expires_at),
      customer,
      metadata: r.metadata,
    };
    const data =
      r.transaction_id === null
        ? {
            object: 'payment_intent',
            id: Number(r.intent_id),
            transaction_id: null,
            trx_id: null,
            gateway_trx_id: null,
            amount: r.intent_amount,
            currency: r.intent_currency,
            fee: null,
            status: r.intent_status === 'expired' || r.expires_at.getTime() <= Date.now() ? 'expired' : 'pending',
            gateway: null,
            method: null,
            exchange_rate: null,
            failure_reason: null,
            created_at: iso(r.intent_created_at),
            completed_at: null,
            ...base,
          }
        : {
            object: 'transaction',
            id: Number(r.transaction_id),
            transaction_id: Number(r.transaction_id),
            trx_id: r.trx_id,
            gateway_trx_id: r.gateway_trx_id,
            amount: r.amount,
            currency: r.currency,
            fee: r.fee,
            status: r.status,
            gateway: r.gateway,
            method: r.method,
            exchange_rate: trim(r.exchange_rate),
            failure_reason: r.failure_reason,
            created_at: iso(r.created_at),
            completed_at: iso(r.completed_at),
            ...base,
          };
    res.json({ success: true, data: { ...data, livemode: mode === 'live' } });
  }),
);

app.get(
  '/api/v1/customers/:identifier',
  withMerchant(async (req, res, { brandId, mode }) => {
    const identifier = String(req.params.identifier);
    const byEmail = isEmailIdentifier(identifier);
    const normalised = byEmail ? normalizeEmail(identifier) : normalizePhone(identifier);
    if (!normalised) return notFound(res, 'CUSTOMER_NOT_FOUND', 'Customer not found');
    const { rows } = await pool.query(
      `SELECT id, uuid, name_encrypted, email_encrypted, phone_encrypted, created_at FROM customers
        WHERE brand_id = $1 AND mode = $3 AND ${byEmail ? 'email_hash' : 'phone_hash'} = $2`,
      [brandId, blindIndex(keys.blindIndexKey, brandId, byEmail ? 'email' : 'phone', normalised), mode],
    );
    const c = rows[0];
    if (!c) return notFound(res, 'CUSTOMER_NOT_FOUND', 'Customer not found');
    const dec = (v: string | null, ctx: string) => (v === null ? null : keys.pii.decrypt(v, ctx, { brandId, row: c.uuid }));
    res.json({
      success: true,
      data: {
        id: Number(c.id),
        uuid: c.uuid,
        name: dec(c.name_encrypted, 'customer.name'),
        email: dec(c.email_encrypted, 'customer.email'),
        phone: dec(c.phone_encrypted, 'customer.phone'),
        created_at: iso(c.created_at),
        livemode: mode === 'live',
      },
    });
  }),
);

const AMOUNT_RE = /^(?:0|[1-9]\d{0,11})\.\d{2}$/;

/** The plain insert path: check the two fields that decide the row, insert, answer. */
app.post(
  '/api/v1/payments',
  withMerchant(async (req, res, { brandId, mode }) => {
    const body = req.body as { amount?: unknown; currency?: unknown; reference?: unknown; metadata?: unknown };
    if (typeof body?.amount !== 'string' || !AMOUNT_RE.test(body.amount) || typeof body.currency !== 'string' || !/^[A-Z]{3}$/.test(body.currency)) {
      return res.status(400).json({ success: false, error: { code: 'VALIDATION_ERROR', message: 'Invalid amount or currency' } });
    }
    const insert: [string, unknown[]] = [
      `INSERT INTO payment_intents (uuid, brand_id, mode, amount, currency, reference, metadata, expires_at)
       VALUES (gen_random_uuid(), $1, $6, $2, $3, $4, $5::jsonb, now() + interval '60 minutes')
       RETURNING uuid, mode, amount::text AS amount, metadata, created_at, expires_at`,
      [brandId, body.amount, body.currency, typeof body.reference === 'string' ? body.reference : null, JSON.stringify(body.metadata ?? {}), mode],
    ];
    const key = req.get('idempotency-key');
    if (KEYED && key !== undefined) return keyedCreate(res, brandId, key, req.body, insert);
    const { rows } = await pool.query(insert[0], insert[1]);
    res.status(201).json(createdBody(rows[0], { currency: body.currency, reference: body.reference }));
  }),
);

/**
 * BASELINE_IDEMPOTENCY=1: the same Idempotency-Key protocol as ours, by hand and
 * one request at a time (claim the key in its own committed statement; then
 * BEGIN, the insert, the stored response, COMMIT), so the cost of the protocol
 * itself can be told from the cost of our layers (bench/intents.ts).
 */
const KEYED = process.env.BASELINE_IDEMPOTENCY === '1';

async function keyedCreate(res: Response, brandId: number, key: string, rawBody: unknown, insert: [string, unknown[]]): Promise<unknown> {
  const hash = createHash('sha256').update(`POST\n/api/v1/payments\n${JSON.stringify(rawBody)}`).digest('hex');
  const token = randomUUID();
  const claimed = await pool.query(
    `INSERT INTO idempotency_keys (brand_id, mode, key, request_hash, lock_token, locked_at) VALUES ($1, 'live', $2, $3, $4, now())
     ON CONFLICT (brand_id, mode, key) DO NOTHING RETURNING id`,
    [brandId, key, hash, token],
  );
  if (claimed.rowCount === 0) {
    const { rows } = await pool.query(`SELECT request_hash, response_status, response_body #>> '{}' AS body FROM idempotency_keys WHERE brand_id = $1 AND mode = 'live' AND key = $2`, [brandId, key]);
    if (rows[0]?.request_hash !== hash) return res.status(409).json({ success: false, error: { code: 'IDEMPOTENCY_KEY_REUSED', message: 'Key reused' } });
    if (rows[0].body === null) return res.status(409).json({ success: false, error: { code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS', message: 'In progress' } });
    return res.status(rows[0].response_status).type('application/json').send(rows[0].body);
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(insert[0], insert[1]);
    const answer = JSON.stringify(createdBody(rows[0], rawBody as { currency: string; reference?: unknown }));
    await client.query(
      `UPDATE idempotency_keys SET response_status = 201, response_body = to_jsonb($1::text), completed_at = now(), lock_token = NULL
        WHERE brand_id = $2 AND mode = 'live' AND key = $3 AND lock_token = $4`,
      [answer, brandId, key, token],
    );
    await client.query('COMMIT');
    return res.status(201).type('application/json').send(answer);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    await pool.query("DELETE FROM idempotency_keys WHERE brand_id = $1 AND mode = 'live' AND key = $2 AND lock_token = $3", [brandId, key, token]);
    throw err;
  } finally {
    client.release();
  }
}

function createdBody(r: { uuid: string; mode: string; amount: string; metadata: unknown; created_at: Date; expires_at: Date }, body: { currency: string; reference?: unknown }) {
  return {
      success: true,
      data: {
        payment_id: r.uuid,
        checkout_url: `${publicBaseUrl}/checkout/${r.uuid}`,
        status: 'pending',
        amount: r.amount,
        currency: body.currency,
        reference: typeof body.reference === 'string' ? body.reference : null,
        customer_id: null,
        metadata: r.metadata,
        success_url: null,
        cancel_url: null,
        expires_at: iso(r.expires_at),
        created_at: iso(r.created_at),
        livemode: r.mode === 'live',
      },
  };
}

baselineSmsRoute(app, pool, keys);

app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
  process.stderr.write(`baseline error: ${err instanceof Error ? err.message : String(err)}\n`);
  res.status(500).json({ success: false, error: { code: 'INTERNAL_ERROR', message: 'Internal error' } });
});

const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void pool.end().then(() => process.exit(0)));
});
