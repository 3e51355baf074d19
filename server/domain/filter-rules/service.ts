import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { DEFAULT_FILTER_RULES, type FilterRules } from './defaults.ts';

export interface VersionedFilterRules extends FilterRules {
  version: number;
  updatedAt: Date;
}

export const MAX_RULE_ITEMS = 100;
export const MAX_RULE_ITEM_LENGTH = 64;
export const MIN_CHECK_INTERVAL_HOURS = 1;
export const MAX_CHECK_INTERVAL_HOURS = 168;

interface Row {
  version: number;
  updated_at: Date;
  allowed_senders: string[];
  positive_keywords: string[];
  negative_keywords: string[];
  check_interval_hours: number;
}

const toRules = (r: Row): VersionedFilterRules => ({
  version: r.version,
  updatedAt: new Date(r.updated_at),
  allowedSenders: r.allowed_senders,
  positiveKeywords: r.positive_keywords,
  negativeKeywords: r.negative_keywords,
  checkIntervalHours: r.check_interval_hours,
});

async function select(em: EntityManager, brandId: number, lock = false): Promise<Row | undefined> {
  const rows = await em.execute<Row[]>(
    `SELECT version, updated_at, allowed_senders, positive_keywords, negative_keywords, check_interval_hours
       FROM sms_filter_rules WHERE brand_id = ?${lock ? ' FOR UPDATE' : ''}`,
    [brandId],
  );
  return rows[0];
}

/**
 * The brand's rules. A brand that never changed them gets the defaults,
 * written on first read so `version` and `updated_at` stay stable afterwards.
 */
export async function getFilterRules(em: EntityManager, brandId: number): Promise<VersionedFilterRules> {
  const existing = await select(em, brandId);
  if (existing) return toRules(existing);
  const d = DEFAULT_FILTER_RULES;
  await em.execute(
    `INSERT INTO sms_filter_rules (brand_id, allowed_senders, positive_keywords, negative_keywords, check_interval_hours)
     VALUES (?, ARRAY[?]::text[], ARRAY[?]::text[], ARRAY[?]::text[], ?)
     ON CONFLICT (brand_id) DO NOTHING`,
    [brandId, d.allowedSenders, d.positiveKeywords, d.negativeKeywords, d.checkIntervalHours],
  );
  return toRules((await select(em, brandId))!);
}

function cleanList(field: string, list: readonly string[]): string[] {
  if (list.length > MAX_RULE_ITEMS) throw new AppError('VALIDATION_ERROR', `At most ${MAX_RULE_ITEMS} entries`, { field });
  const out: string[] = [];
  for (const [i, raw] of list.entries()) {
    const item = raw.normalize('NFC').trim();
    // Control characters would make rules the app cannot show or match reliably.
    if (item === '' || item.length > MAX_RULE_ITEM_LENGTH || /\p{Cc}/u.test(item)) {
      throw new AppError('VALIDATION_ERROR', `Must be 1 to ${MAX_RULE_ITEM_LENGTH} printable characters`, { field: `${field}.${i}` });
    }
    if (!out.some((o) => o.toLowerCase() === item.toLowerCase())) out.push(item);
  }
  return out;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Changes some of the brand's rules (admin API and CLI). `version` goes up by
 * one when anything actually changed, never otherwise, so the app's "do I
 * have the newest rules" check stays meaningful. Concurrent updates are
 * serialised on the row.
 */
export async function updateFilterRules(
  em: EntityManager,
  brandId: number,
  patch: Partial<FilterRules>,
): Promise<VersionedFilterRules> {
  const next: Partial<FilterRules> = {};
  if (patch.allowedSenders) next.allowedSenders = cleanList('allowed_senders', patch.allowedSenders);
  if (patch.positiveKeywords) next.positiveKeywords = cleanList('positive_keywords', patch.positiveKeywords);
  if (patch.negativeKeywords) next.negativeKeywords = cleanList('negative_keywords', patch.negativeKeywords);
  if (patch.checkIntervalHours !== undefined) {
    const h = patch.checkIntervalHours;
    if (!Number.isInteger(h) || h < MIN_CHECK_INTERVAL_HOURS || h > MAX_CHECK_INTERVAL_HOURS) {
      throw new AppError('VALIDATION_ERROR', `Must be a whole number of hours between ${MIN_CHECK_INTERVAL_HOURS} and ${MAX_CHECK_INTERVAL_HOURS}`, { field: 'check_interval_hours' });
    }
    next.checkIntervalHours = h;
  }
  await getFilterRules(em, brandId);
  return em.transactional(async (tx) => {
    const current = toRules((await select(tx, brandId, true))!);
    const merged: FilterRules = { ...current, ...next };
    const changed =
      !sameList(merged.allowedSenders, current.allowedSenders) ||
      !sameList(merged.positiveKeywords, current.positiveKeywords) ||
      !sameList(merged.negativeKeywords, current.negativeKeywords) ||
      merged.checkIntervalHours !== current.checkIntervalHours;
    if (!changed) return current;
    await tx.execute(
      `UPDATE sms_filter_rules SET
          allowed_senders = ARRAY[?]::text[], positive_keywords = ARRAY[?]::text[], negative_keywords = ARRAY[?]::text[],
          check_interval_hours = ?, version = version + 1, updated_at = now()
        WHERE brand_id = ?`,
      [merged.allowedSenders, merged.positiveKeywords, merged.negativeKeywords, merged.checkIntervalHours, brandId],
    );
    return toRules((await select(tx, brandId))!);
  });
}
