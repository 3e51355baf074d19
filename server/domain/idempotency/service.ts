import { createHash, randomUUID } from 'node:crypto';
import { type Db } from '../db.ts';
import { deleteHeldKey, deleteKeysOlderThan, insertOrTakeOverKey, selectKey, storeResponse, type KeyRow } from './queries.ts';
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
 * Claims a request's key in its own statement, which commits on its own (see
 * the protocol above): the request that inserts the key (or takes over an
 * expired or abandoned one) runs; otherwise the stored row decides (replay,
 * IDEMPOTENCY_KEY_REUSED, or IDEMPOTENCY_REQUEST_IN_PROGRESS).
 */
export async function claimKey(em: Db, request: ClaimRequest, attempt = 0): Promise<Claim> {
  const token = randomUUID();
  const held = await insertOrTakeOverKey(em, { ...request, token }, { ttlHours: KEY_TTL_HOURS, lockTimeoutSeconds: LOCK_TIMEOUT_SECONDS });
  if (held) return { kind: 'execute', token };
  const row = await selectKey(em, request);
  if (row) return decide(row, request.hash);
  // Released (its first request failed with a 5xx) between our insert and read: claim it again, a few times.
  return attempt < 2 ? claimKey(em, request, attempt + 1) : { kind: 'in_progress' };
}

/**
 * Stores the first response, inside the transaction that did the work. The body
 * is kept as the exact JSON text (a jsonb string: jsonb objects would reorder
 * keys), so replays are byte-identical.
 */
export async function completeKey(em: Db, scope: { brandId: number; mode: Mode; key: string }, token: string, status: number, bodyJson: string): Promise<void> {
  const held = await storeResponse(em, scope, token, status, bodyJson);
  // Another run took the key over (this one outlived the lock timeout): the caller
  // must roll its work back rather than commit a second execution.
  if (!held) throw new Error('idempotency key is no longer held by this request');
}

/** Frees the key after a failure that must not be replayed (5xx, dropped connection). */
export async function releaseKey(em: Db, scope: { brandId: number; mode: Mode; key: string }, token: string): Promise<void> {
  await deleteHeldKey(em, scope, token);
}

/** Deletes keys past their retention; returns how many. For a periodic job. */
export async function purgeExpiredKeys(em: Db, opts: { limit?: number } = {}): Promise<number> {
  return deleteKeysOlderThan(em, KEY_TTL_HOURS, opts.limit ?? 1000);
}
