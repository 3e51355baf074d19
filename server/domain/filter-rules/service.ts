import { AppError } from '../../../contract/common/errors.ts';
import { sql, type Selectable } from 'kysely';
import { prepared, type DB, transaction, type Db } from '../db.ts';
import { senderKey } from '../sms/wording.ts';
import { DEFAULT_FILTER_RULES, type FilterRules, type FilterRulesPatch } from './defaults.ts';

export interface VersionedFilterRules extends FilterRules {
  version: number;
  updatedAt: Date;
}

const MAX_RULE_ITEMS = 100;
const MAX_RULE_ITEM_LENGTH = 64;
const MIN_CHECK_INTERVAL_HOURS = 1;
const MAX_CHECK_INTERVAL_HOURS = 168;

type Row = Pick<Selectable<DB['sms_filter_rules']>, 'version' | 'updated_at' | 'extra_senders' | 'positive_keywords' | 'negative_keywords' | 'check_interval_hours'>;
const RULE_COLUMNS = ['version', 'updated_at', 'extra_senders', 'positive_keywords', 'negative_keywords', 'check_interval_hours'] as const;

interface GatewaySenders {
  /** The enabled gateways' senders, in display order. */
  senders: string[];
  epoch: number;
  updated_at: Date;
}

/** Raw: the enabled gateways' senders in display order, each gateway's in its own order (unnest WITH ORDINALITY). */
const enabledSenders = sql<string[] | null>`(SELECT array_agg(s ORDER BY g.sort_order, g.id, o) FROM gateways g, unnest(g.sms_senders) WITH ORDINALITY AS u(s, o) WHERE g.enabled)`;

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
const toRules = (r: Row, g: GatewaySenders): VersionedFilterRules => {
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

async function gatewaySenders(em: Db): Promise<GatewaySenders> {
  const r = await em.selectFrom('sms_sender_epoch').select(['version as epoch', 'updated_at']).select(enabledSenders.as('senders')).executeTakeFirstOrThrow();
  return { senders: r.senders ?? [], epoch: r.epoch, updated_at: r.updated_at };
}

async function select(em: Db, brandId: number, lock = false): Promise<Row | undefined> {
  const q = em.selectFrom('sms_filter_rules').select(RULE_COLUMNS).where('brand_id', '=', brandId);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}

/** selectWithSenders' statement, compiled once (db.ts `prepared`): every forwarded batch reads it. */
const rulesWithSenders = prepared((k, $: { brandId: number }) =>
  k
    .selectFrom(['sms_filter_rules as r', 'sms_sender_epoch as e'])
    .select(['r.version', 'r.extra_senders', 'r.positive_keywords', 'r.negative_keywords', 'r.check_interval_hours', 'e.version as epoch'])
    // The later of the two is what toRules shows; selected under the column's name, so it comes back as a Date.
    .select(sql<Date>`GREATEST(r.updated_at, e.updated_at)`.as('updated_at'))
    .select(enabledSenders.as('senders'))
    .where('r.brand_id', '=', $.brandId),
);

/** The brand's row and the gateways' senders in one round trip (read on every forwarded batch). */
async function selectWithSenders(em: Db, brandId: number): Promise<{ row: Row; g: GatewaySenders } | undefined> {
  const r = await rulesWithSenders.executeTakeFirst(em, { brandId });
  return r && { row: r, g: { senders: r.senders ?? [], epoch: r.epoch, updated_at: r.updated_at } };
}

/**
 * The brand's rules. A brand that never changed them gets the defaults,
 * written on first read so `version` and `updated_at` stay stable afterwards.
 */
export async function getFilterRules(em: Db, brandId: number): Promise<VersionedFilterRules> {
  const existing = await selectWithSenders(em, brandId);
  if (existing) return toRules(existing.row, existing.g);
  const d = DEFAULT_FILTER_RULES;
  await em
    .insertInto('sms_filter_rules')
    .values({
      brand_id: brandId,
      extra_senders: [...[]],
      positive_keywords: [...d.positiveKeywords],
      negative_keywords: [...d.negativeKeywords],
      check_interval_hours: d.checkIntervalHours,
    })
    .onConflict((oc) => oc.column('brand_id').doNothing())
    .execute();
  return toRules((await select(em, brandId))!, await gatewaySenders(em));
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
    const g = await gatewaySenders(tx);
    const current = toRules((await select(tx, brandId, true))!, g);
    const merged: FilterRules = { ...current, ...next };
    const changed =
      !sameList(merged.extraSenders, current.extraSenders) ||
      !sameList(merged.positiveKeywords, current.positiveKeywords) ||
      !sameList(merged.negativeKeywords, current.negativeKeywords) ||
      merged.checkIntervalHours !== current.checkIntervalHours;
    if (!changed) return current;
    await tx
      .updateTable('sms_filter_rules')
      .set({
        extra_senders: [...merged.extraSenders],
        positive_keywords: [...merged.positiveKeywords],
        negative_keywords: [...merged.negativeKeywords],
        check_interval_hours: merged.checkIntervalHours,
        version: sql<number>`version + 1`,
        updated_at: sql<Date>`now()`,
      })
      .where('brand_id', '=', brandId)
      .execute();
    return toRules((await select(tx, brandId))!, g);
  });
}
