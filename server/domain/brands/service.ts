import { randomUUID } from 'node:crypto';
import type { EntityManager } from '../../infra/database/orm.ts';
import { generateApiKey, hashApiKey, looksLikeApiKey, type ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { AppError } from '../../../contract/common/errors.ts';
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
  const apiKey = em.create(ApiKey, { brand, name: input.name, prefix: generated.prefix, keyHash: generated.hash });
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
export const API_KEY_LAST_USED_RESOLUTION_SECONDS = 60;

/**
 * Resolves a presented key to its brand. The lookup is by SHA-256 of the key
 * through a unique index: the database compares digests, never the secret, so
 * response time does not depend on how many leading characters were right.
 * Refreshes a stale `last_used_at` with a separate conditional UPDATE: folding
 * it into the lookup (a data-modifying CTE) measured 1.7 to 2.9 times the plain
 * SELECT's median on every call, not only on the once-a-minute ones that write.
 */
export async function authenticateApiKey(em: EntityManager, presented: string): Promise<{ brandId: number; apiKeyId: number } | null> {
  if (!looksLikeApiKey(presented)) return null;
  const rows = await em.execute<Array<{ id: string | number; brand_id: string | number; stale: boolean }>>(
    `SELECT k.id, k.brand_id, (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ?)) AS stale
       FROM api_keys k JOIN brands b ON b.id = k.brand_id
      WHERE k.key_hash = ? AND k.revoked_at IS NULL AND b.status = 'active'`,
    [API_KEY_LAST_USED_RESOLUTION_SECONDS, hashApiKey(presented)],
  );
  if (rows[0]?.stale) {
    // Conditional: of many calls racing past the minute mark, one writes.
    await em.execute(
      'UPDATE api_keys SET last_used_at = now() WHERE id = ? AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => ?))',
      [rows[0].id, API_KEY_LAST_USED_RESOLUTION_SECONDS],
    );
  }
  const row = rows[0];
  return row ? { brandId: Number(row.brand_id), apiKeyId: Number(row.id) } : null;
}
