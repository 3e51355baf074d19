import { AppError } from '../../../contract/common/errors.ts';
import type { BrandStatus, Mode } from '../../../contract/vocabulary.ts';
import type { ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { createApiKey, createBrand, revokeApiKey } from './service.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { sql } from 'kysely';
import { type Db } from '../db.ts';
import { scopeParam } from './scope.ts';

/** A brand as the admin surface shows it. */
export interface AdminBrand {
  id: number;
  uuid: string;
  name: string;
  timezone: string;
  status: BrandStatus;
  created_at: string;
  updated_at: string;
}

export interface AdminApiKey {
  id: number;
  brand_id: number;
  name: string;
  prefix: string;
  mode: Mode;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const BRAND_COLUMNS = ['id', 'uuid', 'name', 'timezone', 'status', 'created_at', 'updated_at'] as const;
const KEY_COLUMNS = ['id', 'brand_id', 'name', 'prefix', 'mode', 'created_at', 'last_used_at', 'revoked_at'] as const;

const selectBrands = (em: Db) => em.selectFrom('brands').select(BRAND_COLUMNS);
const selectKeys = (em: Db) => em.selectFrom('api_keys').select(KEY_COLUMNS);
type BrandRow = Awaited<ReturnType<ReturnType<typeof selectBrands>['executeTakeFirstOrThrow']>>;
type KeyRow = Awaited<ReturnType<ReturnType<typeof selectKeys>['executeTakeFirstOrThrow']>>;

const toBrand = (r: BrandRow): AdminBrand => ({
  id: r.id,
  uuid: r.uuid,
  name: r.name,
  timezone: r.timezone,
  status: r.status,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

const toKey = (r: KeyRow): AdminApiKey => ({
  id: r.id,
  brand_id: r.brand_id,
  name: r.name,
  prefix: r.prefix,
  mode: r.mode,
  created_at: r.created_at.toISOString(),
  last_used_at: r.last_used_at?.toISOString() ?? null,
  revoked_at: r.revoked_at?.toISOString() ?? null,
});

export async function getAdminBrand(em: Db, brandId: number, opts: { forUpdate?: boolean } = {}): Promise<AdminBrand> {
  let q = selectBrands(em).where('id', '=', brandId);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw new AppError('BRAND_NOT_FOUND');
  return toBrand(row);
}

/** Oldest first. */
export async function listBrands(
  em: Db,
  f: { page: number; perPage: number; status?: BrandStatus; brandIds?: number[] | null },
): Promise<{ items: AdminBrand[]; total: number }> {
  let q = em.selectFrom('brands');
  if (f.status) q = q.where('status', '=', f.status);
  if (f.brandIds) q = q.where('id', 'in', scopeParam(f.brandIds));
  const { n } = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q.select(BRAND_COLUMNS).orderBy('id').limit(f.perPage).offset((f.page - 1) * f.perPage).execute();
  return { items: rows.map(toBrand), total: Number(n) };
}

export async function createBrandAudited(em: Db, who: AuditActor, input: { name: string; timezone?: string }): Promise<AdminBrand> {
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
  em: Db,
  who: AuditActor,
  brandId: number,
  patch: { name?: string; timezone?: string; status?: BrandStatus },
): Promise<AdminBrand> {
  return withAudit(em, who, async (tx) => {
    const before = await getAdminBrand(tx, brandId, { forUpdate: true });
    const row = await tx
      .updateTable('brands')
      .set({
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.timezone !== undefined && { timezone: patch.timezone }),
        ...(patch.status !== undefined && { status: patch.status }),
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', brandId)
      .returning(BRAND_COLUMNS)
      .executeTakeFirstOrThrow();
    const after = toBrand(row);
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
export async function listApiKeys(em: Db, brandId: number): Promise<AdminApiKey[]> {
  await getAdminBrand(em, brandId);
  const rows = await selectKeys(em).where('brand_id', '=', brandId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(toKey);
}

async function getApiKey(em: Db, brandId: number, keyId: number): Promise<AdminApiKey> {
  const row = await selectKeys(em).where('id', '=', keyId).where('brand_id', '=', brandId).executeTakeFirst();
  if (!row) throw new AppError('API_KEY_NOT_FOUND');
  return toKey(row);
}

/** The clear key is in the result once; the audit row has its id and prefix only. */
export async function createApiKeyAudited(
  em: Db,
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
export async function revokeApiKeyAudited(em: Db, who: AuditActor, brandId: number, keyId: number): Promise<AdminApiKey> {
  return withAudit(em, who, async (tx) => {
    await getAdminBrand(tx, brandId);
    const locked = await selectKeys(tx).where('id', '=', keyId).where('brand_id', '=', brandId).forUpdate().executeTakeFirst();
    if (!locked) throw new AppError('API_KEY_NOT_FOUND');
    const wasRevoked = locked.revoked_at !== null;
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
