import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { generateApiKey, hashApiKey, looksLikeApiKey, type ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { prepared, rawStatement, type DB, type Db } from '../db.ts';
import { countUpsert } from '../rate-limit/queries.ts';

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

/** The row of `lookupAndCount`: the key, and its rate-limit count when the key was accepted. */
interface CountedRow {
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
 * The lookup of `authenticateApiKeyHashes` for one key and, in the same
 * statement, the request's count in that key's merchant rate limit
 * (`api-key:<id>` in `rate_limits`, as domain/rate-limit/queries.ts `countHits`
 * keeps it). The count is the limiter's own upsert (the window on the database
 * clock, one atomic `INSERT ... ON CONFLICT`), done only when the lookup accepts
 * the key, as when the limiter ran after authentication.
 *
 * Raw: the increment is countHits' own SQL (rate-limit/queries.ts `countUpsert`),
 * kept one text so the two can never count differently; the typed builder
 * cannot embed it.
 */
const lookupAndCount = rawStatement<CountedRow>(`
WITH found AS (
  SELECT k.id, k.brand_id, k.mode,
         (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${API_KEY_LAST_USED_RESOLUTION_SECONDS})) AS stale
    FROM api_keys k JOIN brands b ON b.id = k.brand_id
   WHERE k.key_hash = $1::varchar AND k.revoked_at IS NULL AND b.status = 'active'
),
spent AS (
  SELECT 'api-key:' || f.id AS bucket, $2::integer AS w, to_timestamp(floor(extract(epoch FROM now()) / $2::integer) * $2::integer) AS window_start
    FROM found f
),
counted AS (
  ${countUpsert('spent')}
)
SELECT f.id, f.brand_id, f.mode, f.stale, c.hits, c.reset_seconds, c.window_epoch
  FROM found f LEFT JOIN counted c ON c.bucket = 'api-key:' || f.id`);

export interface ApiKeyLookupResult {
  principal: ApiKeyPrincipal | null;
  /** This request's count, when asked for and the key was accepted; null: not counted here (the limiter counts it). */
  counted: ApiKeyCount | null;
}

/** A SQLSTATE the server sent back, other than connection failures (08) and shutdowns (57P). */
function answeredByDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57P)/.test(code);
}

/**
 * Looks a presented key's hash up and, when `windowSeconds` is given (the
 * per-key quota's window), counts the request in the same statement (one round
 * trip instead of a lookup and then a count; the count after the lookup was a
 * third sequential round trip of every merchant read).
 *
 * If the database refuses that statement (the counter table unavailable, say), the key is
 * looked up alone and nothing is counted here: the limiter then counts the
 * request itself and fails open as it always has. A failing lookup fails the
 * request as before.
 */
export async function lookupAndCountApiKey(em: Db, hash: string, windowSeconds: number | null): Promise<ApiKeyLookupResult> {
  const alone = async () => ({ principal: (await authenticateApiKeyHashes(em, [hash]))[0] ?? null, counted: null });
  // Only SHA-256 hex digests (anything else matches no key).
  if (windowSeconds === null || !/^[0-9a-f]{64}$/.test(hash)) return alone();
  let row: CountedRow | undefined;
  try {
    [row] = await lookupAndCount(em, [hash, windowSeconds]);
  } catch (err) {
    // Only an error the database answered the statement with: a connection it
    // could not get, or lost, fails the request (503) as the lookup alone would,
    // without a second wait for the pool.
    if (!answeredByDatabase(err)) throw err;
    return alone();
  }
  if (!row) return { principal: null, counted: null };
  if (row.stale) await touchApiKeys(em, [Number(row.id)]);
  const principal: ApiKeyPrincipal = { brandId: Number(row.brand_id), apiKeyId: Number(row.id), mode: row.mode as Mode };
  if (row.hits === null) return { principal, counted: null };
  return { principal, counted: { hits: Number(row.hits), resetSeconds: Number(row.reset_seconds), windowEpoch: Number(row.window_epoch) } };
}

/**
 * The merchant authenticator's lookup: each request looks its key up with a
 * statement of its own, so a revoked key or a disabled brand is refused by every
 * process as soon as the change commits (no cache to outlive it).
 *
 * `rateLimitWindowSeconds` (the per-key quota's window; null when that quota is
 * off or limiting is disabled): a lookup asked to count also counts the request
 * for the limiter in the same statement (`lookupAndCountApiKey`).
 */
export function apiKeyLookup(em: () => Db, rateLimitWindowSeconds: number | null = null): (presented: string, opts?: { count?: boolean }) => Promise<ApiKeyLookupResult> {
  return async (presented, opts = {}) =>
    looksLikeApiKey(presented) ? lookupAndCountApiKey(em(), hashApiKey(presented), opts.count === true ? rateLimitWindowSeconds : null) : { principal: null, counted: null };
}
