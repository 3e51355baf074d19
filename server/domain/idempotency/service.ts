import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager } from '../../infra/database/orm.ts';

/**
 * Idempotency keys, insert-first: the request that inserts the key runs; any
 * other request with the same brand and key either replays the stored response
 * (same request), is refused (another request: IDEMPOTENCY_KEY_REUSED) or is told
 * to retry (first one still running: IDEMPOTENCY_REQUEST_IN_PROGRESS). The unique
 * (brand_id, key) constraint, not a read-then-write check, decides the winner.
 *
 * Keys are kept for at least KEY_TTL_HOURS: an older key counts as unused and is
 * taken over by the next request (and `purgeExpiredKeys` deletes them). The work
 * and its stored response commit in one transaction (see server/http/idempotency.ts),
 * so a run that died (process killed) committed nothing; after LOCK_TIMEOUT_SECONDS
 * the same request may take its key over and run. A slow run that outlives the
 * timeout finds its key gone when it tries to complete and rolls back.
 */
export const KEY_TTL_HOURS = 24;
export const LOCK_TIMEOUT_SECONDS = 300;

/** JSON with object keys sorted at every level, so `{a,b}` and `{b,a}` hash alike. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** What "the same request" means: method, path and canonical body. */
export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method.toUpperCase()}\n${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

export type Claim =
  | { kind: 'execute'; token: string }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'reused' }
  | { kind: 'in_progress' };

interface KeyRow {
  request_hash: string;
  completed_at: Date | null;
  response_status: number | null;
  response_body: string | null;
}

/** Claims `key` for this request, or says what to answer instead. */
export async function claimKey(em: EntityManager, brandId: number, key: string, hash: string): Promise<Claim> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const token = randomUUID();
    const claimed = await em.execute<Array<{ lock_token: string }>>(
      `INSERT INTO idempotency_keys (brand_id, key, request_hash, lock_token, locked_at) VALUES (?, ?, ?, ?, now())
       ON CONFLICT (brand_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, lock_token = EXCLUDED.lock_token, locked_at = now(),
             response_status = NULL, response_body = NULL, completed_at = NULL, created_at = now()
       WHERE idempotency_keys.created_at < now() - make_interval(hours => ?)
          OR (idempotency_keys.completed_at IS NULL AND idempotency_keys.request_hash = EXCLUDED.request_hash
              AND idempotency_keys.locked_at < now() - make_interval(secs => ?))
       RETURNING lock_token`,
      [brandId, key, hash, token, KEY_TTL_HOURS, LOCK_TIMEOUT_SECONDS],
    );
    if (claimed[0]?.lock_token === token) return { kind: 'execute', token };
    const [row] = await em.execute<KeyRow[]>(
      `SELECT request_hash, completed_at, response_status, response_body #>> '{}' AS response_body
         FROM idempotency_keys WHERE brand_id = ? AND key = ?`,
      [brandId, key],
    );
    // Released (the first attempt failed with a 5xx) between our insert and read: try again.
    if (!row) continue;
    if (row.request_hash !== hash) return { kind: 'reused' };
    if (row.completed_at && row.response_status !== null && row.response_body !== null) {
      return { kind: 'replay', status: row.response_status, body: row.response_body };
    }
    return { kind: 'in_progress' };
  }
  return { kind: 'in_progress' };
}

/**
 * Stores the first response, inside the transaction that did the work. The body
 * is kept as the exact JSON text (a jsonb string: jsonb objects would reorder
 * keys), so replays are byte-identical.
 */
export async function completeKey(em: EntityManager, brandId: number, key: string, token: string, status: number, bodyJson: string): Promise<void> {
  const rows = await em.execute<Array<{ id: string }>>(
    `UPDATE idempotency_keys SET response_status = ?, response_body = to_jsonb(?::text), completed_at = now(), lock_token = NULL
      WHERE brand_id = ? AND key = ? AND lock_token = ? RETURNING id`,
    [status, bodyJson, brandId, key, token],
  );
  // Another run took the key over (this one outlived the lock timeout): the caller
  // must roll its work back rather than commit a second execution.
  if (rows.length === 0) throw new Error('idempotency key is no longer held by this request');
}

/** Frees the key after a failure that must not be replayed (5xx, dropped connection). */
export async function releaseKey(em: EntityManager, brandId: number, key: string, token: string): Promise<void> {
  await em.execute('DELETE FROM idempotency_keys WHERE brand_id = ? AND key = ? AND lock_token = ? AND completed_at IS NULL', [
    brandId,
    key,
    token,
  ]);
}

/** Deletes keys past their retention; returns how many. For a periodic job. */
export async function purgeExpiredKeys(em: EntityManager, opts: { limit?: number } = {}): Promise<number> {
  const rows = await em.execute<Array<{ id: string }>>(
    `DELETE FROM idempotency_keys WHERE id IN (
       SELECT id FROM idempotency_keys WHERE created_at < now() - make_interval(hours => ?) ORDER BY created_at LIMIT ?
     ) RETURNING id`,
    [KEY_TTL_HOURS, opts.limit ?? 1000],
  );
  return rows.length;
}
