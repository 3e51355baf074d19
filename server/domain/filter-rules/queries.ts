import { sql, type Selectable } from 'kysely';
import { prepared, type DB, type Db } from '../db.ts';

/** A brand's stored rules. */
export type RulesRow = Pick<Selectable<DB['sms_filter_rules']>, 'version' | 'updated_at' | 'extra_senders' | 'positive_keywords' | 'negative_keywords' | 'check_interval_hours'>;
const RULE_COLUMNS = ['version', 'updated_at', 'extra_senders', 'positive_keywords', 'negative_keywords', 'check_interval_hours'] as const;

/** The gateways' part of every brand's rules. */
export interface GatewaySendersRow {
  /** The enabled gateways' senders, in display order. */
  senders: string[];
  epoch: number;
  updated_at: Date;
}

/** Raw: the enabled gateways' senders in display order, each gateway's in its own order (unnest WITH ORDINALITY). */
const enabledSenders = sql<string[] | null>`(SELECT array_agg(s ORDER BY g.sort_order, g.id, o) FROM gateways g, unnest(g.sms_senders) WITH ORDINALITY AS u(s, o) WHERE g.enabled)`;

export async function selectGatewaySenders(db: Db): Promise<GatewaySendersRow> {
  const r = await db.selectFrom('sms_sender_epoch').select(['version as epoch', 'updated_at']).select(enabledSenders.as('senders')).executeTakeFirstOrThrow();
  return { senders: r.senders ?? [], epoch: r.epoch, updated_at: r.updated_at };
}

export async function selectRules(db: Db, brandId: number, opts: { forUpdate?: boolean } = {}): Promise<RulesRow | undefined> {
  const q = db.selectFrom('sms_filter_rules').select(RULE_COLUMNS).where('brand_id', '=', brandId);
  return (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst();
}

/** selectRulesWithSenders' statement, compiled once (db.ts `prepared`): every forwarded batch reads it. */
const rulesWithSenders = prepared((k, $: { brandId: number }) =>
  k
    .selectFrom(['sms_filter_rules as r', 'sms_sender_epoch as e'])
    .select(['r.version', 'r.extra_senders', 'r.positive_keywords', 'r.negative_keywords', 'r.check_interval_hours', 'e.version as epoch'])
    // The later of the two is what the rules show; selected under the column's name, so it comes back as a Date.
    .select(sql<Date>`GREATEST(r.updated_at, e.updated_at)`.as('updated_at'))
    .select(enabledSenders.as('senders'))
    .where('r.brand_id', '=', $.brandId),
);

/** The brand's row and the gateways' senders in one round trip (read on every forwarded batch). */
export async function selectRulesWithSenders(db: Db, brandId: number): Promise<{ row: RulesRow; g: GatewaySendersRow } | undefined> {
  const r = await rulesWithSenders.executeTakeFirst(db, { brandId });
  return r && { row: r, g: { senders: r.senders ?? [], epoch: r.epoch, updated_at: r.updated_at } };
}

export interface RuleLists {
  extraSenders: readonly string[];
  positiveKeywords: readonly string[];
  negativeKeywords: readonly string[];
  checkIntervalHours: number;
}

/** Writes the brand's first rules; a row already there is kept. */
export async function insertRulesIfAbsent(db: Db, brandId: number, rules: RuleLists): Promise<void> {
  await db
    .insertInto('sms_filter_rules')
    .values({
      brand_id: brandId,
      extra_senders: [...rules.extraSenders],
      positive_keywords: [...rules.positiveKeywords],
      negative_keywords: [...rules.negativeKeywords],
      check_interval_hours: rules.checkIntervalHours,
    })
    .onConflict((oc) => oc.column('brand_id').doNothing())
    .execute();
}

/** Replaces the brand's rules and bumps its version. */
export async function updateRules(db: Db, brandId: number, rules: RuleLists): Promise<void> {
  await db
    .updateTable('sms_filter_rules')
    .set({
      extra_senders: [...rules.extraSenders],
      positive_keywords: [...rules.positiveKeywords],
      negative_keywords: [...rules.negativeKeywords],
      check_interval_hours: rules.checkIntervalHours,
      version: sql<number>`version + 1`,
      updated_at: sql<Date>`now()`,
    })
    .where('brand_id', '=', brandId)
    .execute();
}

export async function incrementSenderEpoch(db: Db): Promise<void> {
  await db.updateTable('sms_sender_epoch').set({ version: sql<number>`version + 1`, updated_at: sql<Date>`now()` }).where('id', '=', true).execute();
}

/** Locks the brand's rules row (if stored) to the end of the transaction. */
export async function lockRules(tx: Db, brandId: number): Promise<void> {
  await tx.selectFrom('sms_filter_rules').select('brand_id').where('brand_id', '=', brandId).forUpdate().execute();
}
