import { AppError } from '../../../contract/common/errors.ts';
import { sql } from 'kysely';
import { type Db } from '../db.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { ALERT_TYPES, type AlertType } from './raise.ts';

async function assertBrand(em: Db, brandId: number): Promise<void> {
  const brand = await em.selectFrom('brands').select('id').where('id', '=', brandId).executeTakeFirst();
  if (!brand) throw new AppError('BRAND_NOT_FOUND');
}

async function readDisabled(em: Db, brandId: number): Promise<AlertType[]> {
  const row = await em.selectFrom('alert_brand_settings').select('disabled_types').where('brand_id', '=', brandId).executeTakeFirst();
  return row?.disabled_types ?? [];
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
    await tx
      .insertInto('alert_brand_settings')
      .values({ brand_id: brandId, disabled_types: next })
      .onConflict((oc) => oc.column('brand_id').doUpdateSet((eb) => ({ disabled_types: eb.ref('excluded.disabled_types'), updated_at: sql<Date>`now()` })))
      .execute();
    const changed = before.join(',') !== next.join(',');
    return {
      result: { brand_id: brandId, disabled_types: next },
      audit: changed ? { action: 'alert_settings.update', targetType: 'brand', targetId: brandId, brandId, before: { disabled_types: before }, after: { disabled_types: next } } : null,
    };
  });
}
