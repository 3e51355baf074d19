import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { createApiKey, createBrand, revokeApiKey } from '../brands/service.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { pgDate, pgDateOrNull } from '../../infra/database/pg-date.ts';
import { scopeParam } from '../brands/scope.ts';

/** A brand as the admin surface shows it. */
export interface AdminBrand {
  id: number;
  uuid: string;
  name: string;
  timezone: string;
  status: 'active' | 'disabled';
  created_at: string;
  updated_at: string;
}

export interface AdminApiKey {
  id: number;
  brand_id: number;
  name: string;
  prefix: string;
  mode: 'live' | 'test';
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

interface BrandRow {
  id: string;
  uuid: string;
  name: string;
  timezone: string;
  status: 'active' | 'disabled';
  created_at: string | Date;
  updated_at: string | Date;
}

interface KeyRow {
  id: string;
  brand_id: string;
  name: string;
  prefix: string;
  mode: 'live' | 'test';
  created_at: string | Date;
  last_used_at: string | Date | null;
  revoked_at: string | Date | null;
}

const BRAND_COLUMNS = 'id, uuid, name, timezone, status, created_at, updated_at';
const KEY_COLUMNS = 'id, brand_id, name, prefix, mode, created_at, last_used_at, revoked_at';

const toBrand = (r: BrandRow): AdminBrand => ({
  id: Number(r.id),
  uuid: r.uuid,
  name: r.name,
  timezone: r.timezone,
  status: r.status,
  created_at: pgDate(r.created_at).toISOString(),
  updated_at: pgDate(r.updated_at).toISOString(),
});

const toKey = (r: KeyRow): AdminApiKey => ({
  id: Number(r.id),
  brand_id: Number(r.brand_id),
  name: r.name,
  prefix: r.prefix,
  mode: r.mode,
  created_at: pgDate(r.created_at).toISOString(),
  last_used_at: pgDateOrNull(r.last_used_at)?.toISOString() ?? null,
  revoked_at: pgDateOrNull(r.revoked_at)?.toISOString() ?? null,
});

export async function getAdminBrand(em: EntityManager, brandId: number, opts: { forUpdate?: boolean } = {}): Promise<AdminBrand> {
  const rows = await em.execute<BrandRow[]>(`SELECT ${BRAND_COLUMNS} FROM brands WHERE id = ?${opts.forUpdate ? ' FOR UPDATE' : ''}`, [brandId]);
  if (!rows[0]) throw new AppError('BRAND_NOT_FOUND');
  return toBrand(rows[0]);
}

/** Oldest first. */
export async function listBrands(
  em: EntityManager,
  f: { page: number; perPage: number; status?: 'active' | 'disabled'; brandIds?: number[] | null },
): Promise<{ items: AdminBrand[]; total: number }> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (f.status) {
    conditions.push('status = ?');
    params.push(f.status);
  }
  if (f.brandIds) {
    conditions.push('id IN (?)');
    params.push(scopeParam(f.brandIds));
  }
  const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
  const [count] = await em.execute<Array<{ n: string }>>(`SELECT count(*) AS n FROM brands ${where}`, params);
  const rows = await em.execute<BrandRow[]>(`SELECT ${BRAND_COLUMNS} FROM brands ${where} ORDER BY id LIMIT ? OFFSET ?`, [
    ...params,
    f.perPage,
    (f.page - 1) * f.perPage,
  ]);
  return { items: rows.map(toBrand), total: Number(count!.n) };
}

export async function createBrandAudited(em: EntityManager, who: AuditActor, input: { name: string; timezone?: string }): Promise<AdminBrand> {
  return withAudit(em, who, async (tx) => {
    const created = await createBrand(tx, input);
    const brand = await getAdminBrand(tx, created.id);
    return { result: brand, audit: { action: 'brand.create', targetType: 'brand', targetId: brand.id, brandId: brand.id, after: { status: brand.status, timezone: brand.timezone } } };
  });
}

/**
 * Changes the given fields. The row is locked while it is read and written, so
 * the audit's `before` is the state this change replaced. Recorded when the
 * status or time zone changes (the name is not an audited state).
 */
export async function updateBrand(
  em: EntityManager,
  who: AuditActor,
  brandId: number,
  patch: { name?: string; timezone?: string; status?: 'active' | 'disabled' },
): Promise<AdminBrand> {
  return withAudit(em, who, async (tx) => {
    const before = await getAdminBrand(tx, brandId, { forUpdate: true });
    const rows = await tx.execute<BrandRow[]>(
      `UPDATE brands SET name = COALESCE(?, name), timezone = COALESCE(?, timezone), status = COALESCE(?, status), updated_at = now()
        WHERE id = ? RETURNING ${BRAND_COLUMNS}`,
      [patch.name ?? null, patch.timezone ?? null, patch.status ?? null, brandId],
    );
    const after = toBrand(rows[0]!);
    const changed = before.status !== after.status || before.timezone !== after.timezone;
    return {
      result: after,
      audit: changed
        ? {
            action: 'brand.update',
            targetType: 'brand',
            targetId: brandId,
            brandId,
            before: { status: before.status, timezone: before.timezone },
            after: { status: after.status, timezone: after.timezone },
          }
        : null,
    };
  });
}

/** Newest first, revoked keys included; never the key. */
export async function listApiKeys(em: EntityManager, brandId: number): Promise<AdminApiKey[]> {
  await getAdminBrand(em, brandId);
  const rows = await em.execute<KeyRow[]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE brand_id = ? ORDER BY created_at DESC, id DESC`, [brandId]);
  return rows.map(toKey);
}

async function getApiKey(em: EntityManager, brandId: number, keyId: number): Promise<AdminApiKey> {
  const rows = await em.execute<KeyRow[]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ? AND brand_id = ?`, [keyId, brandId]);
  if (!rows[0]) throw new AppError('API_KEY_NOT_FOUND');
  return toKey(rows[0]);
}

/** The clear key is in the result once; the audit row has its id and prefix only. */
export async function createApiKeyAudited(
  em: EntityManager,
  who: AuditActor,
  brandId: number,
  input: { name: string; mode?: ApiKeyMode },
): Promise<AdminApiKey & { key: string }> {
  return withAudit(em, who, async (tx) => {
    const { apiKey, key } = await createApiKey(tx, brandId, input);
    const view = await getApiKey(tx, brandId, apiKey.id);
    return {
      result: { ...view, key },
      audit: { action: 'api_key.create', targetType: 'api_key', targetId: view.id, brandId, after: { prefix: view.prefix, mode: input.mode ?? 'live', revoked: false } },
    };
  });
}

/** Revoking a revoked key changes nothing and is not recorded again. */
export async function revokeApiKeyAudited(em: EntityManager, who: AuditActor, brandId: number, keyId: number): Promise<AdminApiKey> {
  return withAudit(em, who, async (tx) => {
    await getAdminBrand(tx, brandId);
    const locked = await tx.execute<KeyRow[]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ? AND brand_id = ? FOR UPDATE`, [keyId, brandId]);
    if (!locked[0]) throw new AppError('API_KEY_NOT_FOUND');
    const wasRevoked = locked[0].revoked_at !== null;
    await revokeApiKey(tx, brandId, keyId);
    const after = await getApiKey(tx, brandId, keyId);
    return {
      result: after,
      audit: wasRevoked
        ? null
        : { action: 'api_key.revoke', targetType: 'api_key', targetId: keyId, brandId, before: { prefix: after.prefix, revoked: false }, after: { prefix: after.prefix, revoked: true } },
    };
  });
}
