import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { db, prepared, rawStatement } from '../db.ts';
import { grouped } from '../../infra/database/grouped.ts';
import { POOL_ACQUIRE_TIMEOUT_MS } from '../../infra/database/orm.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
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

const keyOf = (r: { brandId: number; mode: Mode; key: string }) => `${r.brandId}\u0000${r.mode}\u0000${r.key}`;

function decide(row: KeyRow, hash: string): Claim {
  if (row.request_hash !== hash) return { kind: 'reused' };
  if (row.completed_at && row.response_status !== null && row.response_body !== null) {
    return { kind: 'replay', status: row.response_status, body: row.response_body };
  }
  return { kind: 'in_progress' };
}

/**
 * claimKeys' INSERT, the requests as parallel arrays in their (brand, key) order.
 * Raw SQL: an INSERT from a list kept in its order (rows are locked in (brand,
 * key) order, by WITH ORDINALITY), which the typed builder cannot say.
 */
const insertClaims = rawStatement<{ lock_token: string }>(
  `INSERT INTO idempotency_keys AS k (brand_id, mode, key, request_hash, lock_token, locked_at)
   SELECT v.brand_id, v.mode, v.key, v.request_hash, v.lock_token, now()
     FROM unnest($1::bigint[], $7::text[], $2::varchar[], $3::varchar[], $4::uuid[]) WITH ORDINALITY AS v (brand_id, mode, key, request_hash, lock_token, ord)
    ORDER BY v.ord
   ON CONFLICT (brand_id, mode, key) DO UPDATE
     SET request_hash = EXCLUDED.request_hash, lock_token = EXCLUDED.lock_token, locked_at = now(),
         response_status = NULL, response_body = NULL, completed_at = NULL, created_at = now()
   WHERE k.created_at < now() - make_interval(hours => $5::integer)
      OR (k.completed_at IS NULL AND k.request_hash = EXCLUDED.request_hash
          AND k.locked_at < now() - make_interval(secs => $6::integer))
   RETURNING k.lock_token`,
);

/**
 * `claimKey` for several requests in one statement (two when some keys are
 * already there), answering one claim per request, in order, exactly as if
 * they had been claimed one after the other in that order: of requests with
 * the same brand and key the first claims it (or meets the stored row) and the
 * later ones find it held (IDEMPOTENCY_REQUEST_IN_PROGRESS, or REUSED for
 * another body). Rows are inserted in (brand, key) order, so two such
 * statements never lock rows in opposite orders.
 */
export async function claimKeys(em: EntityManager, requests: readonly ClaimRequest[], attempt = 0): Promise<Claim[]> {
  const out: Array<Claim | undefined> = new Array(requests.length);
  const firstOf = new Map<string, number>();
  requests.forEach((r, i) => {
    if (!firstOf.has(keyOf(r))) firstOf.set(keyOf(r), i);
  });
  const firsts = [...firstOf.values()].sort((a, b) => {
    const x = requests[a]!;
    const y = requests[b]!;
    return x.brandId - y.brandId || (x.mode < y.mode ? -1 : x.mode > y.mode ? 1 : 0) || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0);
  });
  const tokens = new Map(firsts.map((i) => [i, randomUUID()]));
  const claimed = await insertClaims(em, [
    firsts.map((i) => requests[i]!.brandId),
    firsts.map((i) => requests[i]!.key),
    firsts.map((i) => requests[i]!.hash),
    firsts.map((i) => tokens.get(i)!),
    KEY_TTL_HOURS,
    LOCK_TIMEOUT_SECONDS,
    firsts.map((i) => requests[i]!.mode),
  ]);
  const won = new Set(claimed.map((r) => r.lock_token));
  const lost: number[] = [];
  for (const i of firsts) {
    const token = tokens.get(i)!;
    if (won.has(token)) out[i] = { kind: 'execute', token };
    else lost.push(i);
  }
  const stored = new Map<string, KeyRow>();
  if (lost.length) {
    const rows = await db(em)
      .selectFrom('idempotency_keys')
      .select(['brand_id', 'mode', 'key', 'request_hash', 'completed_at', 'response_status'])
      // The stored JSON text itself (a jsonb string), for a byte-identical replay.
      .select(sql<string | null>`response_body #>> '{}'`.as('response_body'))
      .where((eb) => eb(eb.refTuple('brand_id', 'mode', 'key'), 'in', lost.map((i) => eb.tuple(requests[i]!.brandId, requests[i]!.mode, requests[i]!.key))))
      .execute();
    for (const row of rows) stored.set(keyOf({ brandId: row.brand_id, mode: row.mode, key: row.key }), row);
    for (const i of lost) {
      const row = stored.get(keyOf(requests[i]!));
      if (row) out[i] = decide(row, requests[i]!.hash);
      // Released (its first request failed with a 5xx) between our insert and read: claim it again, a few times.
      else out[i] = attempt < 2 ? (await claimKeys(em, [requests[i]!], attempt + 1))[0]! : { kind: 'in_progress' };
    }
  }
  requests.forEach((r, i) => {
    if (out[i]) return;
    // A later request with the key of an earlier one in this group: it finds the key as the first left it.
    const first = out[firstOf.get(keyOf(r))!]!;
    const row = stored.get(keyOf(r));
    if (row) out[i] = decide(row, r.hash);
    else out[i] = requests[firstOf.get(keyOf(r))!]!.hash === r.hash || first.kind !== 'execute' ? { kind: 'in_progress' } : { kind: 'reused' };
  });
  return out as Claim[];
}

/** Most claims one statement makes (bounds its parameter list). */
const MAX_CLAIM_GROUP = 200;

/**
 * Claims of concurrent requests, grouped (infra/database/grouped.ts): requests
 * arriving while a claim is in flight are claimed together in the next
 * statement; when idle a request claims at once. The claim commits on its own
 * (see the protocol above), so it runs on a pooled connection of its own.
 *
 * Why: the claim was one of a keyed create's round trips (BENCHMARKS.md). Each
 * request is still claimed by a statement that starts after it arrived, and
 * the unique constraint still picks the winner.
 */
export function groupedClaims(em: () => EntityManager): (request: ClaimRequest) => Promise<Claim> {
  return grouped((requests: ClaimRequest[]) => claimKeys(em(), requests), { maxBatch: MAX_CLAIM_GROUP, queueTimeoutMs: POOL_ACQUIRE_TIMEOUT_MS, concurrency: 2 });
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
export async function completeKey(em: EntityManager, scope: { brandId: number; mode: Mode; key: string }, token: string, status: number, bodyJson: string): Promise<void> {
  const rows = await completeKeyStatement.execute(em, { ...scope, token, status, bodyJson });
  // Another run took the key over (this one outlived the lock timeout): the caller
  // must roll its work back rather than commit a second execution.
  if (rows.length === 0) throw new Error('idempotency key is no longer held by this request');
}

/** Frees the key after a failure that must not be replayed (5xx, dropped connection). */
export async function releaseKey(em: EntityManager, scope: { brandId: number; mode: Mode; key: string }, token: string): Promise<void> {
  await db(em)
    .deleteFrom('idempotency_keys')
    .where('brand_id', '=', scope.brandId)
    .where('mode', '=', scope.mode)
    .where('key', '=', scope.key)
    .where('lock_token', '=', token)
    .where('completed_at', 'is', null)
    .execute();
}

/** Deletes keys past their retention; returns how many. For a periodic job. */
export async function purgeExpiredKeys(em: EntityManager, opts: { limit?: number } = {}): Promise<number> {
  const k = db(em);
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
