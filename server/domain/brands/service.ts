import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { EntityManager } from '../../infra/database/orm.ts';
import { generateApiKey, hashApiKey, looksLikeApiKey, type ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { grouped } from '../../infra/database/grouped.ts';
import { POOL_ACQUIRE_TIMEOUT_MS } from '../../infra/database/orm.ts';
import { db, prepared, rawStatement } from '../db.ts';
import { countUpsert } from '../rate-limit/store.ts';
import { ApiKey, Brand, type ApiKeyEntity, type BrandEntity } from './entities.ts';

export async function createBrand(em: EntityManager, input: { name: string; timezone?: string }): Promise<BrandEntity> {
  const brand = em.create(Brand, { uuid: randomUUID(), name: input.name, timezone: input.timezone ?? 'UTC' });
  await em.flush();
  return brand;
}

export async function getBrand(em: EntityManager, id: number): Promise<BrandEntity> {
  const brand = await em.findOne(Brand, { id });
  if (!brand) throw new AppError('BRAND_NOT_FOUND');
  return brand;
}

/** Creates a key; the clear key is returned once and never stored. */
export async function createApiKey(
  em: EntityManager,
  brandId: number,
  input: { name: string; mode?: ApiKeyMode },
): Promise<{ apiKey: ApiKeyEntity; key: string }> {
  const brand = await getBrand(em, brandId);
  const generated = generateApiKey(input.mode ?? 'live');
  const apiKey = em.create(ApiKey, { brand, name: input.name, prefix: generated.prefix, keyHash: generated.hash, mode: input.mode ?? 'live' });
  await em.flush();
  return { apiKey, key: generated.key };
}

export async function revokeApiKey(em: EntityManager, brandId: number, apiKeyId: number): Promise<ApiKeyEntity> {
  const apiKey = await em.findOne(ApiKey, { id: apiKeyId, brand: brandId });
  if (!apiKey) throw new AppError('API_KEY_NOT_FOUND');
  apiKey.revokedAt ??= new Date();
  await em.flush();
  return apiKey;
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
export async function authenticateApiKeyHashes(em: EntityManager, hashes: readonly string[]): Promise<Array<ApiKeyPrincipal | null>> {
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
async function touchApiKeys(em: EntityManager, ids: number[]): Promise<void> {
  await db(em)
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
export async function lookupAndCountApiKeys(em: EntityManager, items: readonly ApiKeyLookupItem[], windowSeconds: number | null): Promise<ApiKeyLookupResult[]> {
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
export function groupedApiKeyLookup(em: () => EntityManager, rateLimitWindowSeconds: number | null = null): (presented: string, opts?: { count?: boolean }) => Promise<ApiKeyLookupResult> {
  const lookup = grouped((items: ApiKeyLookupItem[]) => lookupAndCountApiKeys(em(), items, rateLimitWindowSeconds), { maxBatch: MAX_LOOKUP_GROUP, queueTimeoutMs: POOL_ACQUIRE_TIMEOUT_MS, concurrency: 2 });
  return async (presented, opts = {}) => (looksLikeApiKey(presented) ? lookup({ hash: hashApiKey(presented), count: opts.count === true }) : { principal: null, counted: null });
}
