import { createHmac } from 'node:crypto';
import pg from 'pg';
import { Agent } from 'undici';
import { PiiCipher, parseKeyring } from '../../server/infra/crypto/pii-cipher.ts';
import { secretContext } from '../../server/domain/webhooks/endpoints.ts';

/**
 * The floor of webhook delivery on this stack: `pg` and undici, no job
 * queue. LISTEN wakes it (a poll every second is the fallback); each loop
 * claims up to BATCH due deliveries of the given brands in one statement
 * (FOR UPDATE SKIP LOCKED, a lease like ours), posts them concurrently with
 * the same signature header, then records every attempt and finishes every
 * delivery in one statement. Same tables, same rows, same logged attempt.
 */
const BATCH = 50;
const LOOPS = 4;
const brandIds = (process.env.BENCH_BRAND_IDS ?? '').split(',').map(Number);
const cipher = new PiiCipher(parseKeyring(process.env.PII_ENCRYPTION_KEYS!));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: LOOPS + 1 });
const agent = new Agent({ connections: 128 });

interface Claimed {
  id: string;
  attempts: number;
  url: string;
  public_id: string;
  event: string;
  payload: string;
  brand_id: string;
  secret_encrypted: string;
  started: Date;
}

async function claim(): Promise<Claimed[]> {
  const { rows } = await pool.query<Claimed>(
    `WITH due AS (
       SELECT id FROM webhook_deliveries
        WHERE status IN ('pending', 'retrying') AND next_attempt_at <= now() AND brand_id = ANY($1::bigint[])
          AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, lease_token = gen_random_uuid(), lease_until = now() + interval '15 seconds',
            last_attempt_at = now(), first_attempt_at = COALESCE(d.first_attempt_at, now()), updated_at = now()
       FROM due, webhook_events e, webhook_endpoints ep
      WHERE d.id = due.id AND e.id = d.event_id AND ep.id = d.endpoint_id
      RETURNING d.id, d.attempts, ep.url, e.public_id, e.event, e.payload, ep.brand_id, ep.secret_encrypted, d.last_attempt_at AS started`,
    [brandIds, BATCH],
  );
  return rows;
}

async function send(c: Claimed): Promise<{ status: number | null; body: string | null; ms: number }> {
  const started = performance.now();
  const t = Math.floor(Date.now() / 1000);
  const secret = cipher.decryptUnbound(c.secret_encrypted, secretContext(c.brand_id));
  const signature = createHmac('sha256', secret).update(`${t}.`).update(c.payload).digest('hex');
  const url = new URL(c.url);
  try {
    const res = await agent.request({
      origin: url.origin,
      path: url.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-id': c.public_id, 'x-webhook-event': c.event, 'x-webhook-signature': `t=${t},v1=${signature}` },
      body: c.payload,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const body = (await res.body.text()).slice(0, 4096);
    return { status: res.statusCode, body, ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { status: null, body: (err as Error).message, ms: Math.round(performance.now() - started) };
  }
}

async function finish(batch: Claimed[], results: Array<{ status: number | null; body: string | null; ms: number }>): Promise<void> {
  const ok = results.map((r) => r.status !== null && r.status >= 200 && r.status < 300);
  await pool.query(
    `WITH done AS (
       SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::timestamptz[], $5::int[], $6::int[], $7::text[], $8::bool[])
         AS u(id, attempt, url, requested_at, duration_ms, response_status, response_body, ok)
     ), logged AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at, duration_ms, response_status, response_body)
       SELECT id, attempt, url, CASE WHEN ok THEN 'success' ELSE 'failure' END, requested_at, duration_ms, response_status, response_body FROM done
     )
     UPDATE webhook_deliveries d
        SET status = CASE WHEN done.ok THEN 'success' ELSE 'retrying' END, response_status = done.response_status, response_body = done.response_body,
            delivered_at = CASE WHEN done.ok THEN now() END, next_attempt_at = CASE WHEN done.ok THEN NULL ELSE now() + interval '1 minute' END,
            lease_token = NULL, lease_until = NULL, updated_at = now()
       FROM done WHERE d.id = done.id`,
    [
      batch.map((c) => c.id),
      batch.map((c) => c.attempts),
      batch.map((c) => c.url),
      batch.map((c) => c.started),
      results.map((r) => r.ms),
      results.map((r) => r.status),
      results.map((r) => r.body),
      ok,
    ],
  );
}

const sleeping = new Set<() => void>();
const nudge = () => {
  for (const wake of [...sleeping]) wake();
  sleeping.clear();
};

async function loop(): Promise<void> {
  for (;;) {
    const batch = await claim();
    if (batch.length === 0) {
      await new Promise<void>((resolve) => {
        sleeping.add(resolve);
        setTimeout(() => sleeping.delete(resolve) && resolve(), 1000);
      });
      continue;
    }
    await finish(batch, await Promise.all(batch.map(send)));
  }
}

const listener = await pool.connect();
listener.on('notification', nudge);
await listener.query('LISTEN bench_webhooks');
for (let i = 0; i < LOOPS; i++) {
  loop().catch((err: unknown) => {
    process.stderr.write(`baseline worker failed: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
process.send?.({ type: 'ready' });
process.on('SIGTERM', () => process.exit(0));
