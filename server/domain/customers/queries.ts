import { sql, type Insertable, type Selectable, type UpdateObject } from 'kysely';
import type { Mode } from '../../../contract/vocabulary.ts';
import { prepared, type DB, type Db } from '../db.ts';

const COLUMNS = ['id', 'uuid', 'brand_id', 'name_encrypted', 'email_encrypted', 'phone_encrypted', 'email_hash', 'phone_hash', 'created_at'] as const;

/** The columns of a customers row the service reads (personal data still encrypted). */
export type CustomerRow = Pick<Selectable<DB['customers']>, (typeof COLUMNS)[number]>;

/** The brand's customers (of the mode) whose email or phone blind index is one of these. */
export async function selectByHashes(db: Db, brandId: number, mode: Mode, hashes: { emailHash: string | null; phoneHash: string | null }): Promise<CustomerRow[]> {
  return db
    .selectFrom('customers')
    .select(COLUMNS)
    .where('brand_id', '=', brandId)
    .where('mode', '=', mode)
    .where((eb) => eb.or([eb('email_hash', '=', hashes.emailHash ?? ''), eb('phone_hash', '=', hashes.phoneHash ?? '')]))
    .execute();
}

export async function updateCustomer(db: Db, brandId: number, id: number, set: UpdateObject<DB, 'customers'>): Promise<void> {
  await db
    .updateTable('customers')
    .set({ ...set, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('brand_id', '=', brandId)
    .execute();
}

/** Inserts a customer; undefined when an email or phone of it is taken already (nothing inserted). */
export async function insertCustomerUnlessTaken(db: Db, row: Insertable<DB['customers']>): Promise<{ id: number; uuid: string } | undefined> {
  return db
    .insertInto('customers')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning(['id', 'uuid'])
    .executeTakeFirst();
}

/** The merchant's customer lookup, one statement per identifier kind, compiled once (db.ts `prepared`; BENCHMARKS.md, "Data layer"). */
const customerByHash = (column: 'email_hash' | 'phone_hash') =>
  prepared((k, $: { brandId: number; mode: Mode; hash: string }) =>
    k.selectFrom('customers').select(COLUMNS).where('brand_id', '=', $.brandId).where('mode', '=', $.mode).where(column, '=', $.hash),
  );
const customerByEmailHash = customerByHash('email_hash');
const customerByPhoneHash = customerByHash('phone_hash');

export async function selectByHash(db: Db, kind: 'email' | 'phone', scope: { brandId: number; mode: Mode; hash: string }): Promise<CustomerRow | undefined> {
  return (kind === 'email' ? customerByEmailHash : customerByPhoneHash).executeTakeFirst(db, scope);
}

/** One page of the brand's customers of the mode, newest first, and how many there are. */
export async function selectCustomerPage(db: Db, brandId: number, mode: Mode, page: { limit: number; offset: number }): Promise<{ rows: CustomerRow[]; total: number }> {
  const ofMode = db.selectFrom('customers').where('brand_id', '=', brandId).where('mode', '=', mode);
  const { total } = await ofMode.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
  const rows = await ofMode.select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(total) };
}
