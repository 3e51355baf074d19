import { AppError } from '../../../contract/common/errors.ts';
import type { ApiKeyDialect, ApiKeyScope, BrandStatus, Mode } from '../../../contract/vocabulary.ts';
import type { ApiKeyMode } from '../../infra/crypto/tokens.ts';
import { createApiKey, createBrand, revokeApiKey } from './service.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { type Db } from '../db.ts';
import { getBrandLogoMeta, HEX_COLOR_RE, type BrandLogoMeta } from './look.ts';
import { selectBrandPage, selectShownBrand, selectShownKey, selectShownKeys, updateBrandRow, type ShownBrandRow, type ShownKeyRow } from './queries.ts';

/** A brand as the admin surface shows it. */
export interface AdminBrand {
  id: number;
  uuid: string;
  name: string;
  timezone: string;
  status: BrandStatus;
  receipts_enabled: boolean;
  primary_color: string | null;
  support_phone: string | null;
  support_email: string | null;
  logo: BrandLogoMeta | null;
  created_at: string;
  updated_at: string;
}

export interface AdminApiKey {
  id: number;
  brand_id: number;
  name: string;
  prefix: string;
  mode: Mode;
  dialect: ApiKeyDialect;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  scopes: ApiKeyScope[] | null;
  expires_at: string | null;
}

type BrandRow = ShownBrandRow;
type KeyRow = ShownKeyRow;

const toBrand = (r: BrandRow, logo: BrandLogoMeta | null): AdminBrand => ({
  id: r.id,
  uuid: r.uuid,
  name: r.name,
  timezone: r.timezone,
  status: r.status,
  receipts_enabled: r.receipts_enabled,
  primary_color: r.primary_color,
  support_phone: r.support_phone,
  support_email: r.support_email,
  logo,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

const toKey = (r: KeyRow): AdminApiKey => ({
  id: r.id,
  brand_id: r.brand_id,
  name: r.name,
  prefix: r.prefix,
  mode: r.mode,
  dialect: r.dialect,
  created_at: r.created_at.toISOString(),
  last_used_at: r.last_used_at?.toISOString() ?? null,
  revoked_at: r.revoked_at?.toISOString() ?? null,
  scopes: r.scopes as ApiKeyScope[] | null,
  expires_at: r.expires_at?.toISOString() ?? null,
});

export async function getAdminBrand(em: Db, brandId: number, opts: { forUpdate?: boolean } = {}): Promise<AdminBrand> {
  const row = await selectShownBrand(em, brandId, opts);
  if (!row) throw new AppError('BRAND_NOT_FOUND');
  return toBrand(row, await getBrandLogoMeta(em, brandId));
}

/** Oldest first. */
export async function listBrands(
  em: Db,
  f: { page: number; perPage: number; status?: BrandStatus; brandIds?: number[] | null },
): Promise<{ items: AdminBrand[]; total: number }> {
  const { rows, total } = await selectBrandPage(em, f, { limit: f.perPage, offset: (f.page - 1) * f.perPage });
  const logos = await Promise.all(rows.map((r) => getBrandLogoMeta(em, r.id)));
  return { items: rows.map((r, i) => toBrand(r, logos[i]!)), total };
}

export async function createBrandAudited(em: Db, who: AuditActor, input: { name: string; timezone?: string }): Promise<AdminBrand> {
  return withAudit(em, who, async (tx) => {
    const created = await createBrand(tx, input);
    const brand = await getAdminBrand(tx, created.id);
    return { result: brand, audit: { action: 'brand.create', targetType: 'brand', targetId: brand.id, brandId: brand.id, after: { status: brand.status, timezone: brand.timezone } } };
  });
}

export interface BrandPatch {
  name?: string;
  timezone?: string;
  status?: BrandStatus;
  receipts_enabled?: boolean;
  primary_color?: string | null;
  support_phone?: string | null;
  support_email?: string | null;
}

/** What a brand change records: states and the checkout's look. The support e-mail is the merchant's public contact, shown to every customer, not personal data. */
const AUDITED = ['status', 'timezone', 'receipts_enabled', 'primary_color', 'support_phone', 'support_email'] as const;
const auditState = (b: AdminBrand) => Object.fromEntries(AUDITED.map((k) => [k, b[k]])) as Record<(typeof AUDITED)[number], string | boolean | null>;

/**
 * Changes the given fields. The row is locked while it is read and written, so
 * the audit's `before` is the state this change replaced. Recorded when the
 * status, time zone, receipts or checkout look changes (the name is not an audited state).
 */
export async function updateBrand(
  em: Db,
  who: AuditActor,
  brandId: number,
  patch: BrandPatch,
): Promise<AdminBrand> {
  const color = patch.primary_color === undefined || patch.primary_color === null ? patch.primary_color : patch.primary_color.trim().toLowerCase();
  if (typeof color === 'string' && !HEX_COLOR_RE.test(color)) throw new AppError('INVALID_BRAND_COLOR', undefined, { field: 'primary_color' });
  return withAudit(em, who, async (tx) => {
    const before = await getAdminBrand(tx, brandId, { forUpdate: true });
    const row = await updateBrandRow(tx, brandId, {
      name: patch.name,
      timezone: patch.timezone,
      status: patch.status,
      receiptsEnabled: patch.receipts_enabled,
      primaryColor: color,
      supportPhone: patch.support_phone,
      supportEmail: patch.support_email,
    });
    const after = toBrand(row, before.logo);
    const changed = AUDITED.some((k) => before[k] !== after[k]);
    return {
      result: after,
      audit: changed
        ? {
            action: 'brand.update',
            targetType: 'brand',
            targetId: brandId,
            brandId,
            before: auditState(before),
            after: auditState(after),
          }
        : null,
    };
  });
}

/** Newest first, revoked keys included; never the key. */
export async function listApiKeys(em: Db, brandId: number): Promise<AdminApiKey[]> {
  await getAdminBrand(em, brandId);
  const rows = await selectShownKeys(em, brandId);
  return rows.map(toKey);
}

async function getApiKey(em: Db, brandId: number, keyId: number): Promise<AdminApiKey> {
  const row = await selectShownKey(em, brandId, keyId);
  if (!row) throw new AppError('API_KEY_NOT_FOUND');
  return toKey(row);
}

/** The clear key is in the result once; the audit row has its id and prefix only. */
export async function createApiKeyAudited(
  em: Db,
  who: AuditActor,
  brandId: number,
  input: { name: string; mode?: ApiKeyMode; dialect?: ApiKeyDialect; scopes?: ApiKeyScope[]; expires_at?: string },
): Promise<AdminApiKey & { key: string }> {
  return withAudit(em, who, async (tx) => {
    const { apiKey, key } = await createApiKey(tx, brandId, { ...input, expiresAt: input.expires_at ? new Date(input.expires_at) : undefined });
    const view = await getApiKey(tx, brandId, apiKey.id);
    return {
      result: { ...view, key },
      audit: { action: 'api_key.create', targetType: 'api_key', targetId: view.id, brandId, after: { prefix: view.prefix, mode: input.mode ?? 'live', dialect: view.dialect, scopes: view.scopes, expires_at: view.expires_at, revoked: false } },
    };
  });
}

/** Revoking a revoked key changes nothing and is not recorded again. */
export async function revokeApiKeyAudited(em: Db, who: AuditActor, brandId: number, keyId: number): Promise<AdminApiKey> {
  return withAudit(em, who, async (tx) => {
    await getAdminBrand(tx, brandId);
    const locked = await selectShownKey(tx, brandId, keyId, { forUpdate: true });
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
