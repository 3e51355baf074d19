import { lockKey, type Db } from '../db.ts';
import { withAudit, type AuditActor, type AuditState } from '../audit/service.ts';
import type { FilterRulesPatch } from '../filter-rules/defaults.ts';
import { getFilterRules, updateFilterRules, type VersionedFilterRules } from '../filter-rules/service.ts';
import { lockRules } from '../filter-rules/queries.ts';
import { getSettings, setSetting, settingKeys, type SettingKey, type Settings } from './service.ts';
import { getAdminBrand } from '../brands/admin.ts';

/** The brand's rules (its defaults until changed); BRAND_NOT_FOUND for an unknown brand. */
export async function getBrandFilterRules(em: Db, brandId: number): Promise<VersionedFilterRules> {
  await getAdminBrand(em, brandId);
  return getFilterRules(em, brandId);
}

const rulesState = (r: VersionedFilterRules): AuditState => ({
  version: r.version,
  extra_senders: r.extraSenders,
  positive_keywords: r.positiveKeywords,
  negative_keywords: r.negativeKeywords,
  check_interval_hours: r.checkIntervalHours,
});

/** Recorded when the rules actually changed (the version went up). */
export async function updateFilterRulesAudited(em: Db, who: AuditActor, brandId: number, patch: FilterRulesPatch): Promise<VersionedFilterRules> {
  return withAudit(em, who, async (tx) => {
    await getBrandFilterRules(tx, brandId);
    // Held to commit, so a concurrent change waits and sees this one as its `before`.
    await lockRules(tx, brandId);
    const before = await getFilterRules(tx, brandId);
    const after = await updateFilterRules(tx, brandId, patch);
    return {
      result: after,
      audit:
        after.version === before.version
          ? null
          : { action: 'filter_rules.update', targetType: 'filter_rules', targetId: brandId, brandId, before: rulesState(before), after: rulesState(after) },
    };
  });
}

/** Changes the given settings together (all or none); recorded with the values that changed. */
export async function updateSettingsAudited(em: Db, who: AuditActor, patch: Partial<Settings>): Promise<Settings> {
  return withAudit(em, who, async (tx) => {
    await lockKey(tx, 'admin:settings');
    const before = await getSettings(tx);
    const keys = settingKeys.filter((k) => patch[k] !== undefined);
    for (const key of keys) await setSetting(tx, key, patch[key]);
    const after = await getSettings(tx);
    const changed = keys.filter((k) => before[k] !== after[k]);
    const pick = (s: Settings) => Object.fromEntries(changed.map((k: SettingKey) => [k, s[k]])) as AuditState;
    return { result: after, audit: changed.length ? { action: 'settings.update', targetType: 'settings', targetId: null, before: pick(before), after: pick(after) } : null };
  });
}
