import { AppError } from '../../../contract/common/errors.ts';
import { transaction, type Db } from '../db.ts';
import { senderKey } from '../sms/wording.ts';
import { DEFAULT_FILTER_RULES, type FilterRules, type FilterRulesPatch } from './defaults.ts';
import { insertRulesIfAbsent, selectGatewaySenders, selectRules, selectRulesWithSenders, updateRules, type GatewaySendersRow, type RulesRow } from './queries.ts';

export interface VersionedFilterRules extends FilterRules {
  version: number;
  updatedAt: Date;
}

const MAX_RULE_ITEMS = 100;
const MAX_RULE_ITEM_LENGTH = 64;
const MIN_CHECK_INTERVAL_HOURS = 1;
const MAX_CHECK_INTERVAL_HOURS = 168;

/** One list, first spelling of each sender kept (compared like `sameSender`). */
function union(...lists: ReadonlyArray<readonly string[]>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const s of lists.flat()) {
    const key = senderKey(s) ?? `raw:${s}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(s);
  }
  return out;
}

/**
 * The version a phone sees is the brand's own counter plus the gateways'
 * sender epoch: both only ever grow and every change bumps one of them, so the
 * sum grows with every change to what the phone gets.
 */
const toRules = (r: RulesRow, g: GatewaySendersRow): VersionedFilterRules => {
  return {
    version: r.version + g.epoch,
    updatedAt: r.updated_at > g.updated_at ? r.updated_at : g.updated_at,
    allowedSenders: union(g.senders, r.extra_senders),
    extraSenders: r.extra_senders,
    positiveKeywords: r.positive_keywords,
    negativeKeywords: r.negative_keywords,
    checkIntervalHours: r.check_interval_hours,
  };
};

/**
 * The brand's rules. A brand that never changed them gets the defaults,
 * written on first read so `version` and `updated_at` stay stable afterwards.
 */
export async function getFilterRules(em: Db, brandId: number): Promise<VersionedFilterRules> {
  const existing = await selectRulesWithSenders(em, brandId);
  if (existing) return toRules(existing.row, existing.g);
  const d = DEFAULT_FILTER_RULES;
  await insertRulesIfAbsent(em, brandId, { extraSenders: [], positiveKeywords: d.positiveKeywords, negativeKeywords: d.negativeKeywords, checkIntervalHours: d.checkIntervalHours });
  return toRules((await selectRules(em, brandId))!, await selectGatewaySenders(em));
}

/** Extra senders must be able to equal a real sender (printable ASCII names or numbers; see senders.ts). */
function cleanSenders(list: readonly string[]): string[] {
  const out = cleanList('extra_senders', list);
  out.forEach((s, i) => {
    if (senderKey(s) === null) throw new AppError('VALIDATION_ERROR', 'Sender ids are printable ASCII names or phone numbers', { field: `extra_senders.${i}` });
  });
  return union(out);
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
  em: Db,
  brandId: number,
  patch: FilterRulesPatch,
): Promise<VersionedFilterRules> {
  const next: FilterRulesPatch = {};
  if (patch.extraSenders) next.extraSenders = cleanSenders(patch.extraSenders);
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
  return transaction(em, async (tx) => {
    const g = await selectGatewaySenders(tx);
    const current = toRules((await selectRules(tx, brandId, { forUpdate: true }))!, g);
    const merged: FilterRules = { ...current, ...next };
    const changed =
      !sameList(merged.extraSenders, current.extraSenders) ||
      !sameList(merged.positiveKeywords, current.positiveKeywords) ||
      !sameList(merged.negativeKeywords, current.negativeKeywords) ||
      merged.checkIntervalHours !== current.checkIntervalHours;
    if (!changed) return current;
    await updateRules(tx, brandId, merged);
    return toRules((await selectRules(tx, brandId))!, g);
  });
}
