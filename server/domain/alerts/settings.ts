import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { ALERT_TYPES, type AlertType } from './raise.ts';

async function assertBrand(em: EntityManager, brandId: number): Promise<void> {
  const rows = await em.execute('SELECT 1 FROM brands WHERE id = ?', [brandId]);
  if (rows.length === 0) throw new AppError('BRAND_NOT_FOUND');
}

async function readDisabled(em: EntityManager, brandId: number): Promise<AlertType[]> {
  const rows = await em.execute<Array<{ disabled_types: AlertType[] }>>('SELECT disabled_types FROM alert_brand_settings WHERE brand_id = ?', [brandId]);
  return rows[0]?.disabled_types ?? [];
}

export async function getAlertSettings(em: EntityManager, brandId: number): Promise<{ brand_id: number; disabled_types: AlertType[] }> {
  await assertBrand(em, brandId);
  return { brand_id: brandId, disabled_types: await readDisabled(em, brandId) };
}

/** Replaces the brand's switched-off types (kept in the canonical order), audited in the same transaction. */
export async function putAlertSettings(em: EntityManager, who: AuditActor, brandId: number, disabled: AlertType[]) {
  const next = ALERT_TYPES.filter((t) => disabled.includes(t));
  return withAudit(em, who, async (tx) => {
    await assertBrand(tx, brandId);
    const before = await readDisabled(tx, brandId);
    await tx.execute(
      `INSERT INTO alert_brand_settings (brand_id, disabled_types) VALUES (?, ?::text[])
       ON CONFLICT (brand_id) DO UPDATE SET disabled_types = EXCLUDED.disabled_types, updated_at = now()`,
      [brandId, `{${next.join(',')}}`],
    );
    const changed = before.join(',') !== next.join(',');
    return {
      result: { brand_id: brandId, disabled_types: next },
      audit: changed ? { action: 'alert_settings.update', targetType: 'brand', targetId: brandId, brandId, before: { disabled_types: before }, after: { disabled_types: next } } : null,
    };
  });
}
