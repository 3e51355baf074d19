import { AppError } from '../../../contract/common/errors.ts';
import { type Db } from '../db.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { ALERT_TYPES, type AlertType } from './raise.ts';
import { brandExists, selectDisabledTypes, upsertDisabledTypes } from './queries.ts';

async function assertBrand(em: Db, brandId: number): Promise<void> {
  if (!(await brandExists(em, brandId))) throw new AppError('BRAND_NOT_FOUND');
}

async function readDisabled(em: Db, brandId: number): Promise<AlertType[]> {
  return selectDisabledTypes(em, brandId);
}

export async function getAlertSettings(em: Db, brandId: number): Promise<{ brand_id: number; disabled_types: AlertType[] }> {
  await assertBrand(em, brandId);
  return { brand_id: brandId, disabled_types: await readDisabled(em, brandId) };
}

/** Replaces the brand's switched-off types (kept in the canonical order), audited in the same transaction. */
export async function putAlertSettings(em: Db, who: AuditActor, brandId: number, disabled: AlertType[]) {
  const next = ALERT_TYPES.filter((t) => disabled.includes(t));
  return withAudit(em, who, async (tx) => {
    await assertBrand(tx, brandId);
    const before = await readDisabled(tx, brandId);
    await upsertDisabledTypes(tx, brandId, next);
    const changed = before.join(',') !== next.join(',');
    return {
      result: { brand_id: brandId, disabled_types: next },
      audit: changed ? { action: 'alert_settings.update', targetType: 'brand', targetId: brandId, brandId, before: { disabled_types: before }, after: { disabled_types: next } } : null,
    };
  });
}
