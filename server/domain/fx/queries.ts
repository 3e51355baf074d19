import { sql } from 'kysely';
import type { Db } from '../db.ts';

/** A stored rate: 1 `base` = `rate` `quote` (numeric(20,10) as PostgreSQL prints it). */
export interface RateRow {
  base: string;
  quote: string;
  rate: string;
  updated_at: Date;
}

const RATE_COLUMNS = ['base', 'quote', 'rate', 'updated_at'] as const;

/** Creates or replaces the rate of one ordered pair. */
export async function upsertRate(db: Db, input: { base: string; quote: string; rate: string }): Promise<RateRow> {
  return db
    .insertInto('exchange_rates')
    .values({ base: input.base, quote: input.quote, rate: input.rate, updated_at: sql<Date>`now()` })
    .onConflict((oc) => oc.columns(['base', 'quote']).doUpdateSet({ rate: (eb) => eb.ref('excluded.rate'), updated_at: sql<Date>`now()` }))
    .returning(RATE_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Deletes one pair's rate; false when there was none. */
export async function deleteRate(db: Db, base: string, quote: string): Promise<boolean> {
  const row = await db.deleteFrom('exchange_rates').where('base', '=', base).where('quote', '=', quote).returning('id').executeTakeFirst();
  return row !== undefined;
}

export async function selectRates(db: Db): Promise<RateRow[]> {
  return db.selectFrom('exchange_rates').select(RATE_COLUMNS).orderBy('base').orderBy('quote').execute();
}

/** The rates between `from` and any of `others`, in either direction. */
export async function selectRatesBetween(db: Db, from: string, others: readonly string[]): Promise<RateRow[]> {
  return db
    .selectFrom('exchange_rates')
    .select(RATE_COLUMNS)
    .where((eb) => eb.or([eb.and([eb('base', '=', from), eb('quote', 'in', others)]), eb.and([eb('quote', '=', from), eb('base', 'in', others)])]))
    .execute();
}
