import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { EntityManager } from '../../infra/database/orm.ts';
import { generateApiKey, hashApiKey, looksLikeApiKey, type ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import { grouped } from '../../infra/database/grouped.ts';
import { POOL_ACQUIRE_TIMEOUT_MS } from '../../infra/database/orm.ts';
import { db, prepared } from '../db.ts';
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
  if (staleIds.length) {
    // Conditional: of many calls racing past the minute mark, one writes.
    await db(em)
      .updateTable('api_keys as k')
      .set({ last_used_at: sql<Date>`now()` })
      .where('k.id', '=', sql<number>`ANY(${staleIds}::bigint[])`)
      .where(staleKey)
      .execute();
  }
  const byHash = new Map(rows.map((r) => [r.key_hash, { brandId: r.brand_id, apiKeyId: r.id, mode: r.mode as Mode }]));
  return hashes.map((h) => byHash.get(h) ?? null);
}

/** Most keys one grouped lookup resolves (bounds its parameter). */
const MAX_LOOKUP_GROUP = 500;

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
 */
export function groupedApiKeyLookup(em: () => EntityManager): (presented: string) => Promise<ApiKeyPrincipal | null> {
  const lookup = grouped((hashes: string[]) => authenticateApiKeyHashes(em(), hashes), { maxBatch: MAX_LOOKUP_GROUP, queueTimeoutMs: POOL_ACQUIRE_TIMEOUT_MS, concurrency: 2 });
  return async (presented) => (looksLikeApiKey(presented) ? lookup(hashApiKey(presented)) : null);
}
