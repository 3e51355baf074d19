import { sql } from 'kysely';
import { type Db } from '../db.ts';

/** The `settings` table: one jsonb value per key (validated by settings/service.ts). */

export async function storedSetting(db: Db, key: string): Promise<{ value: unknown } | undefined> {
  return db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
}

export async function storedSettings(db: Db, keys: readonly string[]): Promise<Map<string, unknown>> {
  const rows = await db.selectFrom('settings').select(['key', 'value']).where('key', 'in', keys).execute();
  return new Map(rows.map((r) => [r.key, r.value]));
}

export async function upsertSetting(db: Db, key: string, value: unknown): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value, updated_at: sql<Date>`now()` })
    .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), updated_at: sql<Date>`now()` })))
    .execute();
}
