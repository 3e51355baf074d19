import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { prepared, rawStatement, type Db } from '../db.ts';
import type { Mode } from '../../../contract/vocabulary.ts';

/**
 * Idempotency keys, insert-first: the request that inserts the key runs; any
 * other request with the same brand, mode and key either replays the stored response
 * (same request), is refused (another request: IDEMPOTENCY_KEY_REUSED) or is told
 * to retry (first one still running: IDEMPOTENCY_REQUEST_IN_PROGRESS). The unique
 * (brand_id, mode, key) constraint, not a read-then-write check, decides the
 * winner. Keys are per mode: a test request can never take a live key first
 * (and block it for a day) or be answered with a live response.
 *
 * Keys are kept for at least KEY_TTL_HOURS: an older key counts as unused and is
 * taken over by the next request (and `purgeExpiredKeys` deletes them). The work
 * and its stored response commit in one transaction (see server/http/idempotency.ts),
 * so a run that died (process killed) committed nothing; after LOCK_TIMEOUT_SECONDS
 * the same request may take its key over and run. A slow run that outlives the
 * timeout finds its key gone when it tries to complete and rolls back.
 */
const KEY_TTL_HOURS = 24;
const LOCK_TIMEOUT_SECONDS = 300;

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

export interface ClaimRequest {
  brandId: number;
  mode: Mode;
  key: string;
  hash: string;
}

function decide(row: KeyRow, hash: string): Claim {
  if (row.request_hash !== hash) return { kind: 'reused' };
  if (row.completed_at && row.response_status !== null && row.response_body !== null) {
    return { kind: 'replay', status: row.response_status, body: row.response_body };
  }
  return { kind: 'in_progress' };
}

/**
 * claimKey's INSERT. Raw SQL: the conflict rule's conditions name the stored
 * row by its alias and compare it with EXCLUDED, kept as one readable text.
 */
const insertClaim = rawStatement<{ lock_token: string }>(
  `INSERT INTO idempotency_keys AS k (brand_id, mode, key, request_hash, lock_token, locked_at)
   VALUES ($1::bigint, $2::text, $3::varchar, $4::varchar, $5::uuid, now())
   ON CONFLICT (brand_id, mode, key) DO UPDATE
     SET request_hash = EXCLUDED.request_hash, lock_token = EXCLUDED.lock_token, locked_at = now(),
         response_status = NULL, response_body = NULL, completed_at = NULL, created_at = now()
   WHERE k.created_at < now() - make_interval(hours => $6::integer)
      OR (k.completed_at IS NULL AND k.request_hash = EXCLUDED.request_hash
          AND k.locked_at < now() - make_interval(secs => $7::integer))
   RETURNING k.lock_token`,
);

/**
 * Claims a request's key in its own statement, which commits on its own (see
 * the protocol above): the request that inserts the key (or takes over an
 * expired or abandoned one) runs; otherwise the stored row decides (replay,
 * IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_REQUEST_IN_PROGRESS).
 */
export async function claimKey(em: Db, request: ClaimRequest, attempt = 0): Promise<Claim> {
  const token = randomUUID();
  const claimed = await insertClaim(em, [request.brandId, request.mode, request.key, request.hash, token, KEY_TTL_HOURS, LOCK_TIMEOUT_SECONDS]);
  if (claimed.some((r) => r.lock_token === token)) return { kind: 'execute', token };
  const row = await em
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'completed_at', 'response_status'])
    // The stored JSON text itself (a jsonb string), for a byte-identical replay.
    .select(sql<string | null>`response_body #>> '{}'`.as('response_body'))
    .where('brand_id', '=', request.brandId)
    .where('mode', '=', request.mode)
    .where('key', '=', request.key)
    .executeTakeFirst();
  if (row) return decide(row, request.hash);
  // Released (its first request failed with a 5xx) between our insert and read: claim it again, a few times.
  return attempt < 2 ? claimKey(em, request, attempt + 1) : { kind: 'in_progress' };
}

/** completeKey's UPDATE, run by every keyed request, compiled once (db.ts `prepared`; BENCHMARKS.md, "Data layer"). */
const completeKeyStatement = prepared((k, $: { brandId: number; mode: Mode; key: string; token: string; status: number; bodyJson: string }) =>
  k
    .updateTable('idempotency_keys')
    // A jsonb string of the exact text: jsonb objects would reorder keys.
    .set({ response_status: $.status, response_body: sql`to_jsonb(${$.bodyJson}::text)`, completed_at: sql<Date>`now()`, lock_token: null })
    .where('brand_id', '=', $.brandId)
    .where('mode', '=', $.mode)
    .where('key', '=', $.key)
    .where('lock_token', '=', $.token)
    .returning('id'),
);

/**
 * Stores the first response, inside the transaction that did the work. The body
 * is kept as the exact JSON text (a jsonb string: jsonb objects would reorder
 * keys), so replays are byte-identical.
 */
export async function completeKey(em: Db, scope: { brandId: number; mode: Mode; key: string }, token: string, status: number, bodyJson: string): Promise<void> {
  const rows = await completeKeyStatement.execute(em, { ...scope, token, status, bodyJson });
  // Another run took the key over (this one outlived the lock timeout): the caller
  // must roll its work back rather than commit a second execution.
  if (rows.length === 0) throw new Error('idempotency key is no longer held by this request');
}

/** Frees the key after a failure that must not be replayed (5xx, dropped connection). */
export async function releaseKey(em: Db, scope: { brandId: number; mode: Mode; key: string }, token: string): Promise<void> {
  await em
    .deleteFrom('idempotency_keys')
    .where('brand_id', '=', scope.brandId)
    .where('mode', '=', scope.mode)
    .where('key', '=', scope.key)
    .where('lock_token', '=', token)
    .where('completed_at', 'is', null)
    .execute();
}

/** Deletes keys past their retention; returns how many. For a periodic job. */
export async function purgeExpiredKeys(em: Db, opts: { limit?: number } = {}): Promise<number> {
  const k = em;
  const rows = await k
    .deleteFrom('idempotency_keys')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('idempotency_keys')
        .select('id')
        .where('created_at', '<', sql<Date>`now() - make_interval(hours => ${KEY_TTL_HOURS})`)
        .orderBy('created_at')
        .limit(opts.limit ?? 1000),
    )
    .returning('id')
    .execute();
  return rows.length;
}
