import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey, looksLikeApiKey, type ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { AppError } from '../../../contract/common/errors.ts';
import type { ApiKeyDialect, ApiKeyScope, Mode } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';
import {
  insertApiKey,
  insertBrand,
  revokeApiKeyRow,
  selectApiKey,
  selectBrand,
  selectLiveKeyAndCount,
  selectLiveKeysByHash,
  touchApiKeys,
  type ApiKeyRow,
  type BrandRow,
  type CountedKeyRow,
} from './queries.ts';

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
  dialect: ApiKeyDialect;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

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
  dialect: r.dialect,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at ?? null,
  revokedAt: r.revoked_at ?? null,
});

export async function createBrand(em: Db, input: { name: string; timezone?: string }): Promise<BrandRecord> {
  const now = new Date();
  const row = await insertBrand(em, { uuid: randomUUID(), name: input.name, timezone: input.timezone ?? 'UTC', status: 'active', created_at: now, updated_at: now });
  return toBrand(row);
}

export async function getBrand(em: Db, id: number): Promise<BrandRecord> {
  const row = await selectBrand(em, id);
  if (!row) throw new AppError('BRAND_NOT_FOUND');
  return toBrand(row);
}

/** Creates a key; the clear key is returned once and never stored. */
export async function createApiKey(
  em: Db,
  brandId: number,
  input: { name: string; mode?: ApiKeyMode; dialect?: ApiKeyDialect; scopes?: ApiKeyScope[]; expiresAt?: Date },
): Promise<{ apiKey: ApiKeyRecord; key: string }> {
  const brand = await getBrand(em, brandId);
  const dialect = input.dialect ?? 'native';
  const generated = generateApiKey(input.mode ?? 'live', dialect);
  const row = await insertApiKey(em, { brand_id: brand.id, name: input.name, prefix: generated.prefix, key_hash: generated.hash, mode: input.mode ?? 'live', dialect, scopes: input.scopes ? [...input.scopes] : null, expires_at: input.expiresAt ?? null, created_at: new Date() });
  return { apiKey: toApiKey(row), key: generated.key };
}

/** Sets `revoked_at` (once: a revoked key keeps the time it was first revoked). */
export async function revokeApiKey(em: Db, brandId: number, apiKeyId: number): Promise<ApiKeyRecord> {
  const find = () => selectApiKey(em, brandId, apiKeyId);
  const row = await find();
  if (!row) throw new AppError('API_KEY_NOT_FOUND');
  if (row.revoked_at !== null) return toApiKey(row);
  const revoked = await revokeApiKeyRow(em, brandId, apiKeyId);
  // Null: a concurrent revoke wrote first; its time stands.
  return toApiKey(revoked ?? (await find())!);
}

export interface ApiKeyPrincipal {
  brandId: number;
  apiKeyId: number;
  /** The key's mode: it sees and creates only objects of this mode. */
  mode: Mode;
  /** What it may do; null: everything (merchantScopeOf names what each route needs). */
  scopes: ApiKeyScope[] | null;
}

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
  const rows = await selectLiveKeysByHash(em, distinct);
  const staleIds = rows.filter((r) => r.stale).map((r) => r.id);
  if (staleIds.length) await touchApiKeys(em, staleIds);
  const byHash = new Map(rows.map((r) => [r.key_hash, { brandId: r.brand_id, apiKeyId: r.id, mode: r.mode as Mode, scopes: r.scopes as ApiKeyScope[] | null }]));
  return hashes.map((h) => byHash.get(h) ?? null);
}

/** A request's place in its key's current window, counted by the lookup (what `countHits` answers for the bucket). */
export interface ApiKeyCount {
  hits: number;
  resetSeconds: number;
  windowEpoch: number;
}

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
  let row: CountedKeyRow | undefined;
  try {
    row = await selectLiveKeyAndCount(em, hash, windowSeconds);
  } catch (err) {
    // Only an error the database answered the statement with: a connection it
    // could not get, or lost, fails the request (503) as the lookup alone would,
    // without a second wait for the pool.
    if (!answeredByDatabase(err)) throw err;
    return alone();
  }
  if (!row) return { principal: null, counted: null };
  if (row.stale) await touchApiKeys(em, [Number(row.id)]);
  const principal: ApiKeyPrincipal = { brandId: Number(row.brand_id), apiKeyId: Number(row.id), mode: row.mode as Mode, scopes: row.scopes as ApiKeyScope[] | null };
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
