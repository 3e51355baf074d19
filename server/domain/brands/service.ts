import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { generateApiKey, hashApiKey, looksLikeApiKey, type ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import { grouped } from '../../infra/database/grouped.ts';
import { POOL_ACQUIRE_TIMEOUT_MS } from '../../infra/database/database.ts';
import { prepared, rawStatement, type DB, type Db } from '../db.ts';
import { countUpsert } from '../rate-limit/store.ts';

/** A brand as the domain reads it (entities.ts `Brand`, camelCase). */
export interface BrandRecord {
  id: number;
  uuid: string;
  name: string;
  /** IANA time zone used for "today" on the device dashboard. */
  timezone: string;
  status: 'active' | 'disabled';
  createdAt: Date;
  updatedAt: Date;
}

/** An API key as the domain reads it (entities.ts `ApiKey`, camelCase); never the key itself. */
export interface ApiKeyRecord {
  id: number;
  brandId: number;
  name: string;
  prefix: string;
  keyHash: string;
  mode: Mode;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

type BrandRow = Selectable<DB['brands']>;
type ApiKeyRow = Selectable<DB['api_keys']>;

const toBrand = (r: BrandRow): BrandRecord => ({
  id: r.id,
  uuid: r.uuid,
  name: r.name,
  timezone: r.timezone,
  status: r.status,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toApiKey = (r: ApiKeyRow): ApiKeyRecord => ({
  id: r.id,
  brandId: r.brand_id,
  name: r.name,
  prefix: r.prefix,
  keyHash: r.key_hash,
  mode: r.mode,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at ?? null,
  revokedAt: r.revoked_at ?? null,
});

export async function createBrand(em: Db, input: { name: string; timezone?: string }): Promise<BrandRecord> {
  const now = new Date();
  const row = await em
    .insertInto('brands')
    .values({ uuid: randomUUID(), name: input.name, timezone: input.timezone ?? 'UTC', status: 'active', created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toBrand(row);
}

export async function getBrand(em: Db, id: number): Promise<BrandRecord> {
  const row = await em.selectFrom('brands').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new AppError('BRAND_NOT_FOUND');
  return toBrand(row);
}

/** Creates a key; the clear key is returned once and never stored. */
export async function createApiKey(
  em: Db,
  brandId: number,
  input: { name: string; mode?: ApiKeyMode },
): Promise<{ apiKey: ApiKeyRecord; key: string }> {
  const brand = await getBrand(em, brandId);
  const generated = generateApiKey(input.mode ?? 'live');
  const row = await em
    .insertInto('api_keys')
    .values({ brand_id: brand.id, name: input.name, prefix: generated.prefix, key_hash: generated.hash, mode: input.mode ?? 'live', created_at: new Date() })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { apiKey: toApiKey(row), key: generated.key };
}

/** Sets `revoked_at` (once: a revoked key keeps the time it was first revoked). */
export async function revokeApiKey(em: Db, brandId: number, apiKeyId: number): Promise<ApiKeyRecord> {
  const find = () => em.selectFrom('api_keys').selectAll().where('id', '=', apiKeyId).where('brand_id', '=', brandId).executeTakeFirst();
  const row = await find();
  if (!row) throw new AppError('API_KEY_NOT_FOUND');
  if (row.revoked_at !== null) return toApiKey(row);
  const revoked = await em
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', apiKeyId)
    .where('brand_id', '=', brandId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  // Null: a concurrent revoke wrote first; its time stands.
  return toApiKey(revoked ?? (await find())!);
}

/**
 * `last_used_at` is written at most this often: the admin list shows it to the
 * minute, and a call that finds it fresh stays one read-only statement.
 */
const API_KEY_LAST_USED_RESOLUTION_SECONDS = 60;

export interface ApiKeyPrincipal {
  brandId: number;
  apiKeyId: number;
  /** The key's mode: it sees and creates only objects of this mode. */
  mode: Mode;
}

// Staleness on the database's clock, like the write below: the application's may differ.
const staleKey = sql<boolean>`(k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${API_KEY_LAST_USED_RESOLUTION_SECONDS}))`;

/** The lookup of every merchant request, compiled once (db.ts `prepared`; BENCHMARKS.md, "Data layer"). */
const apiKeysByHash = prepared((k, $: { hashes: string[] }) =>
  k
    .selectFrom('api_keys as k')
    .innerJoin('brands as b', 'b.id', 'k.brand_id')
    .select(['k.key_hash', 'k.id', 'k.brand_id', 'k.mode', staleKey.as('stale')])
    // One array parameter: one statement shape (and plan) whatever the number of keys.
    .where('k.key_hash', '=', sql<string>`ANY(${$.hashes}::varchar[])`)
    .where('k.revoked_at', 'is', null)
    .where('b.status', '=', 'active'),
);

/**
 * Resolves presented keys (by their SHA-256, see `hashApiKey`) to their brands in
 * one statement; the answer has one entry per hash, null when the key is unknown,
 * revoked or its brand is not active. The lookup goes through a unique index: the
 * database compares digests, never the secret, so response time does not depend
 * on how many leading characters were right.
 *
 * Refreshes stale `last_used_at` values with a separate conditional UPDATE:
 * folding it into the lookup (a data-modifying CTE) slows every call, not only the
 * once-a-minute ones that write (figures: BENCHMARKS.md, "What the profiles showed", 9).
 */
export async function authenticateApiKeyHashes(em: Db, hashes: readonly string[]): Promise<Array<ApiKeyPrincipal | null>> {
  // Only SHA-256 hex digests (anything else matches no key).
  const distinct = [...new Set(hashes)].filter((h) => /^[0-9a-f]{64}$/.test(h));
  if (distinct.length === 0) return hashes.map(() => null);
  const rows = await apiKeysByHash.execute(em, { hashes: distinct });
  const staleIds = rows.filter((r) => r.stale).map((r) => r.id);
  if (staleIds.length) await touchApiKeys(em, staleIds);
  const byHash = new Map(rows.map((r) => [r.key_hash, { brandId: r.brand_id, apiKeyId: r.id, mode: r.mode as Mode }]));
  return hashes.map((h) => byHash.get(h) ?? null);
}

/** Refreshes stale `last_used_at` values; conditional: of many calls racing past the minute mark, one writes. */
async function touchApiKeys(em: Db, ids: number[]): Promise<void> {
  await em
    .updateTable('api_keys as k')
    .set({ last_used_at: sql<Date>`now()` })
    .where('k.id', '=', sql<number>`ANY(${ids}::bigint[])`)
    .where(staleKey)
    .execute();
}

/** Most keys one grouped lookup resolves (bounds its parameter). */
const MAX_LOOKUP_GROUP = 500;

/**
 * The merchant rate limit's count (`api-key:<id>` in `rate_limits`, as
 * domain/rate-limit/store.ts `countHits` keeps it) of a request whose key the
 * same statement accepted: the window's total with this group's hits, from
 * which each request gets its place (`ApiKeyCount`).
 */
interface CountedRow {
  key_hash: string;
  id: number | string;
  brand_id: number | string;
  mode: string;
  stale: boolean;
  hits: number | string | null;
  reset_seconds: number | string | null;
  window_epoch: number | string | null;
}

/** A request's place in its key's current window, counted by the lookup (what `countHits` answers for the bucket). */
export interface ApiKeyCount {
  hits: number;
  resetSeconds: number;
  windowEpoch: number;
}

/**
 * The lookup of `authenticateApiKeyHashes` and, in the same statement, the
 * rate-limit count of each accepted key: `counts` says how many requests of
 * the group to count per hash. The count is the limiter's own upsert
 * (`countHits`: the window on the database clock, one atomic
 * `INSERT ... ON CONFLICT` per bucket, buckets in order), done only for keys
 * the lookup accepts, as when the limiter ran after authentication. A group
 * with nothing to count writes nothing.
 *
 * Raw: the increment is countHits' own SQL (rate-limit/store.ts `countUpsert`),
 * kept one text so the two can never count differently; the typed builder
 * cannot embed it.
 */
const lookupAndCount = rawStatement<CountedRow>(`
WITH found AS (
  SELECT k.key_hash, k.id, k.brand_id, k.mode,
         (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${API_KEY_LAST_USED_RESOLUTION_SECONDS})) AS stale
    FROM api_keys k JOIN brands b ON b.id = k.brand_id
   WHERE k.key_hash = ANY($1::varchar[]) AND k.revoked_at IS NULL AND b.status = 'active'
),
spent AS (
  SELECT 'api-key:' || f.id AS bucket, $4::integer AS w, i.n, to_timestamp(floor(extract(epoch FROM now()) / $4::integer) * $4::integer) AS window_start
    FROM found f JOIN unnest($2::varchar[], $3::integer[]) AS i (key_hash, n) ON i.key_hash = f.key_hash
),
counted AS (
  ${countUpsert('spent')}
)
SELECT f.key_hash, f.id, f.brand_id, f.mode, f.stale, c.hits, c.reset_seconds, c.window_epoch
  FROM found f LEFT JOIN counted c ON c.bucket = 'api-key:' || f.id`);

export interface ApiKeyLookupItem {
  hash: string;
  /** Count this request in its key's rate-limit window (the route is limited per API key), if the key is accepted. */
  count: boolean;
}

export interface ApiKeyLookupResult {
  principal: ApiKeyPrincipal | null;
  /** This request's count, when asked for and the key was accepted; null: not counted here (the limiter counts it). */
  counted: ApiKeyCount | null;
}

/**
 * Resolves a group of lookups, counting the requests that ask for it in the
 * same statement (one round trip instead of a lookup and then a count). Each
 * counted request gets its exact place in arrival order: of k requests of the
 * group on one key whose window total is now T, the first has T-k+1, the last T
 * (as domain/rate-limit/batch.ts `assignCounts`).
 *
 * If that statement fails (the counter table unavailable, say), the group is
 * looked up alone and nothing is counted here: the limiter then counts those
 * requests itself and fails open as it always has. A failing lookup fails the
 * requests as before.
 */
export async function lookupAndCountApiKeys(em: Db, items: readonly ApiKeyLookupItem[], windowSeconds: number | null): Promise<ApiKeyLookupResult[]> {
  const hashes = items.map((i) => i.hash);
  const counting = windowSeconds === null ? [] : items.filter((i) => i.count && /^[0-9a-f]{64}$/.test(i.hash));
  if (counting.length === 0) return (await authenticateApiKeyHashes(em, hashes)).map((principal) => ({ principal, counted: null }));
  const distinct = [...new Set(hashes)].filter((h) => /^[0-9a-f]{64}$/.test(h));
  const spent = new Map<string, number>();
  for (const i of counting) spent.set(i.hash, (spent.get(i.hash) ?? 0) + 1);
  let rows: CountedRow[];
  try {
    rows = await lookupAndCount(em, [distinct, [...spent.keys()], [...spent.values()], windowSeconds]);
  } catch {
    return (await authenticateApiKeyHashes(em, hashes)).map((principal) => ({ principal, counted: null }));
  }
  const staleIds = rows.filter((r) => r.stale).map((r) => Number(r.id));
  if (staleIds.length) await touchApiKeys(em, staleIds);
  const byHash = new Map(rows.map((r) => [r.key_hash, r]));
  const placed = new Map<string, number>();
  return items.map((item) => {
    const r = byHash.get(item.hash);
    if (!r) return { principal: null, counted: null };
    const principal: ApiKeyPrincipal = { brandId: Number(r.brand_id), apiKeyId: Number(r.id), mode: r.mode as Mode };
    if (!item.count || windowSeconds === null || r.hits === null) return { principal, counted: null };
    const i = placed.get(item.hash) ?? 0;
    placed.set(item.hash, i + 1);
    return { principal, counted: { hits: Number(r.hits) - spent.get(item.hash)! + 1 + i, resetSeconds: Number(r.reset_seconds), windowEpoch: Number(r.window_epoch) } };
  });
}

/**
 * API-key lookups of concurrent requests, grouped (infra/database/grouped.ts):
 * requests arriving while a lookup is in flight are resolved together in the
 * next statement. When idle a request is looked up at once.
 *
 * Why grouped and not cached: the lookup was one of a merchant read's three
 * round trips (BENCHMARKS.md). A cache would save it too, but a revoked key or a
 * disabled brand would then stay accepted somewhere until every process heard
 * of it. Here each request is still checked by a statement that starts after the
 * request arrived, so a revocation committed before a request is seen by it in
 * every process, as without grouping; only the round trips are shared.
 *
 * `rateLimitWindowSeconds` (the per-key quota's window; null when that quota is
 * off or limiting is disabled): a lookup asked to count also counts the
 * request for the limiter in the same statement (`lookupAndCountApiKeys`).
 * Why: at a steady moderate rate requests rarely share a statement, and the
 * count after the lookup was a third sequential round trip of every merchant
 * read, against the hand-written floor's two (BENCHMARKS.md, "Merchant reads:
 * where the p99 tail comes from").
 */
export function groupedApiKeyLookup(em: () => Db, rateLimitWindowSeconds: number | null = null): (presented: string, opts?: { count?: boolean }) => Promise<ApiKeyLookupResult> {
  const lookup = grouped((items: ApiKeyLookupItem[]) => lookupAndCountApiKeys(em(), items, rateLimitWindowSeconds), { maxBatch: MAX_LOOKUP_GROUP, queueTimeoutMs: POOL_ACQUIRE_TIMEOUT_MS, concurrency: 2 });
  return async (presented, opts = {}) => (looksLikeApiKey(presented) ? lookup({ hash: hashApiKey(presented), count: opts.count === true }) : { principal: null, counted: null });
}
