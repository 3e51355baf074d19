import { createHmac, randomUUID } from 'node:crypto';
import type { Express, Request, Response, NextFunction } from 'express';
import jwt from 'jsonwebtoken';
import type pg from 'pg';
import type { PersonalDataKeys } from '../../server/domain/customers/keys.ts';
import { compareMoney } from '../../server/domain/money/decimal.ts';
import { chooseMatch } from '../../server/domain/sms/matching/matcher.ts';
import { normalizeSender, parseSms, type GatewayParseConfig } from '../../server/domain/sms/templates/parser.ts';

/**
 * The floor of SMS verification: per forwarded SMS one database transaction
 * that stores the record, reads the gateways' templates, finds the candidates
 * (the same query and index as ours), locks the intent and transaction,
 * completes both, writes the `payment.completed` event and the record's
 * outcome. Candidates are the claimers of the trx id and the open payments
 * with the exact amount, as ours loads them (server/domain/sms/matching/candidates.ts). The pure parser and matcher are the service's own (they are the
 * rule, not a framework layer). Handles the happy paths the benchmark
 * drives; anything else is answered as ours would classify it, unmatched.
 */

interface Sms {
  device_message_id: string;
  sender: string;
  body: string;
  received_at: string;
}

const WINDOW_MINUTES = 1440;

async function device(pool: pg.Pool, req: Request): Promise<{ id: number; brandId: number } | null> {
  const token = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
  if (!token) return null;
  let sub: string;
  try {
    const claims = jwt.verify(token, process.env.JWT_ACCESS_SECRET!, { algorithms: ['HS256'], issuer: 'paycollect', audience: 'paycollect-device' }) as { typ?: string; sub?: string };
    if (claims.typ !== 'access' || typeof claims.sub !== 'string') return null;
    sub = claims.sub;
  } catch {
    return null;
  }
  const { rows } = await pool.query<{ id: string; brand_id: string }>(
    `WITH found AS (
       SELECT d.id, d.brand_id, d.last_seen_at FROM devices d JOIN brands b ON b.id = d.brand_id
        WHERE d.uuid = $1 AND d.status = 'active' AND b.status = 'active'
     ), touched AS (
       UPDATE devices SET last_seen_at = now() WHERE id IN (SELECT id FROM found WHERE last_seen_at IS NULL OR last_seen_at < now() - interval '60 seconds') AND status = 'active'
     )
     SELECT id, brand_id FROM found`,
    [sub],
  );
  return rows[0] ? { id: Number(rows[0].id), brandId: Number(rows[0].brand_id) } : null;
}

async function matchOne(client: pg.PoolClient, keys: PersonalDataKeys, dev: { id: number; brandId: number }, sms: Sms) {
  const text = sms.body.normalize('NFC').replace(/\s+/gu, ' ').trim();
  const hash = createHmac('sha256', keys.blindIndexKey).update(`pc.smshash.v2:${dev.brandId}:${normalizeSender(sms.sender)}\n${text}`).digest('hex');
  const inserted = await client.query<{ id: string; sms_time: Date }>(
    `INSERT INTO sms_records (brand_id, device_id, device_message_id, content_hash, sender, body_encrypted, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING id, LEAST(received_at, server_received_at) AS sms_time`,
    [
      dev.brandId, dev.id, sms.device_message_id, hash,
      keys.pii.encrypt(sms.sender, 'sms_record.sender', { brandId: dev.brandId, row: `${dev.id}:${sms.device_message_id}` }),
      keys.pii.encrypt(sms.body, 'sms_record.body', { brandId: dev.brandId, row: `${dev.id}:${sms.device_message_id}` }),
      sms.received_at,
    ],
  );
  const rec = inserted.rows[0];
  if (!rec) return { device_message_id: sms.device_message_id, id: 0, match_status: 'duplicate', trx_id: null, duplicate_of: null };
  const answer = (status: string, trxId: string | null = null) => ({ device_message_id: sms.device_message_id, id: Number(rec.id), match_status: status, trx_id: trxId, duplicate_of: null });

  const gateways = await client.query<{ id: string; sms_senders: string[]; sms_templates: GatewayParseConfig['templates'] }>(
    'SELECT id, sms_senders, sms_templates FROM gateways WHERE cardinality(sms_senders) > 0 ORDER BY sort_order, id',
  );
  const parsed = parseSms(sms, gateways.rows.map((g) => ({ id: Number(g.id), senders: g.sms_senders, templates: g.sms_templates })));
  if (!parsed || parsed.trxId === null) {
    await client.query(`UPDATE sms_records SET match_status = 'no_match', updated_at = now() WHERE id = $1`, [rec.id]);
    return answer('no_match');
  }
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`gateway_trx_id:${parsed.trxId}`]);
  const candidates = await client.query<{ id: string; intent_id: string; amount: string; gateway_trx_id: string | null; created_at: Date; status: string; brand_id: string }>(
    `SELECT t.id, t.intent_id, t.brand_id, t.amount::text AS amount, t.gateway_trx_id, i.created_at, t.status
       FROM transactions t JOIN payment_intents i ON i.id = t.intent_id
      WHERE t.gateway_id = ANY($1::bigint[])
        AND ((t.brand_id = $2 AND t.status IN ('pending', 'awaiting_verification') AND t.amount = $6::numeric
              AND i.created_at >= $3::timestamptz - make_interval(mins => $4) AND i.created_at <= $3::timestamptz)
             OR (t.gateway_trx_id IS NOT NULL AND upper(t.gateway_trx_id) = upper($5)))
      ORDER BY t.id`,
    [[parsed.gatewayId], dev.brandId, rec.sms_time, WINDOW_MINUTES, parsed.trxId, parsed.amount],
  );
  const own = candidates.rows.filter((c) => Number(c.brand_id) === dev.brandId);
  const result = chooseMatch({
    sms: { amount: parsed.amount, trxId: parsed.trxId!, senderNumber: null, time: rec.sms_time, chainState: null },
    candidates: own.map((c) => ({ id: Number(c.id), amount: c.amount, gatewayTrxId: c.gateway_trx_id, createdAt: c.created_at, status: c.status })),
    rules: { windowMinutes: WINDOW_MINUTES, graceSeconds: 0, reviewAbove: null },
  });
  let trxId: string | null = null;
  if (result.status === 'matched') {
    const chosen = own.find((c) => Number(c.id) === result.transactionId)!;
    await client.query('SELECT id FROM payment_intents WHERE id = $1 FOR UPDATE', [chosen.intent_id]);
    const done = await client.query<{ trx_id: string; amount: string }>(
      `UPDATE transactions SET status = 'completed', completed_at = now(), completion_source = 'sms', gateway_trx_id = COALESCE(gateway_trx_id, $2), updated_at = now()
        WHERE id = $1 AND status IN ('pending', 'awaiting_verification') RETURNING trx_id, amount::text AS amount`,
      [chosen.id, parsed.trxId],
    );
    if (done.rows[0] && compareMoney(done.rows[0].amount, parsed.amount) === 0) {
      trxId = done.rows[0].trx_id;
      const view = await client.query(
        `UPDATE payment_intents i SET status = 'completed', completed_at = now(), updated_at = now() FROM transactions t
          WHERE i.id = $1 AND t.id = $2
          RETURNING i.uuid, i.reference, i.amount::text AS requested_amount, i.currency AS requested_currency, i.expires_at, i.metadata,
                    t.id, t.trx_id, t.gateway_trx_id, t.amount::text AS amount, t.currency, t.fee::text AS fee, t.method, t.created_at, t.completed_at`,
        [chosen.intent_id, chosen.id],
      );
      const v = view.rows[0];
      const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
      const createdAt = new Date();
      const payload = JSON.stringify({
        id: eventId,
        event: 'payment.completed',
        created_at: createdAt.toISOString(),
        data: {
          object: 'transaction', id: Number(v.id), transaction_id: Number(v.id), trx_id: v.trx_id, gateway_trx_id: v.gateway_trx_id, amount: v.amount,
          currency: v.currency, fee: v.fee, status: 'completed', gateway: 'bkash', method: v.method, exchange_rate: null, failure_reason: null,
          created_at: v.created_at.toISOString(), completed_at: v.completed_at.toISOString(), payment_id: v.uuid, reference: v.reference,
          requested_amount: v.requested_amount, requested_currency: v.requested_currency, expires_at: v.expires_at.toISOString(), metadata: v.metadata,
        },
      });
      await client.query(
        'INSERT INTO webhook_events (public_id, brand_id, event, transaction_id, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [eventId, dev.brandId, 'payment.completed', chosen.id, payload, createdAt],
      );
    }
  }
  const status = trxId ? 'matched' : result.status === 'matched' ? 'low_confidence' : result.status;
  await client.query(
    `UPDATE sms_records SET match_status = $2, gateway_id = $3, parsed_amount = $4, parsed_trx_id = $5, transaction_id = $6, confidence = $7,
            candidate_ids = $8::bigint[], reason = $9, matched_at = CASE WHEN $2 = 'matched' THEN now() END, updated_at = now()
      WHERE id = $1`,
    [rec.id, status, parsed.gatewayId, parsed.amount, parsed.trxId, trxId ? result.transactionId : null, result.confidence.toFixed(4), result.candidateIds, result.reason],
  );
  return answer(status, trxId);
}

export function baselineSmsRoute(app: Express, pool: pg.Pool, keys: PersonalDataKeys): void {
  app.post('/api/mobile/v1/sms/messages', async (req: Request, res: Response, next: NextFunction) => {
    try {
      const dev = await device(pool, req);
      if (!dev) return res.status(401).json({ success: false, error: { code: 'UNAUTHORIZED', message: 'Unauthorized' } });
      const messages = (req.body as { messages?: Sms[] })?.messages;
      if (!Array.isArray(messages) || messages.length === 0 || messages.length > 50) {
        return res.status(400).json({ success: false, error: { code: 'VALIDATION_ERROR', message: 'messages' } });
      }
      const data = [];
      const client = await pool.connect();
      try {
        for (const sms of messages) {
          await client.query('BEGIN');
          try {
            data.push(await matchOne(client, keys, dev, sms));
            await client.query('COMMIT');
          } catch (err) {
            await client.query('ROLLBACK');
            throw err;
          }
        }
      } finally {
        client.release();
      }
      res.json({ success: true, data });
    } catch (err) {
      next(err);
    }
  });
}
