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
    // An erased customer has no hashes left, so it never matches.
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

/** The brand's customer (of the mode) with this uuid, unless erased; `forUpdate` locks it until the transaction ends. */
export async function selectByUuid(db: Db, brandId: number, mode: Mode, uuid: string, opts: { forUpdate?: boolean } = {}): Promise<CustomerRow | undefined> {
  let q = db.selectFrom('customers').select(COLUMNS).where('uuid', '=', uuid).where('brand_id', '=', brandId).where('mode', '=', mode).where('erased_at', 'is', null);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** A customer by id (admin routes, which name it by id), unless erased; `forUpdate` locks it. */
export async function selectById(db: Db, id: number, opts: { forUpdate?: boolean } = {}): Promise<(CustomerRow & { mode: Mode }) | undefined> {
  let q = db.selectFrom('customers').select([...COLUMNS, 'mode']).where('id', '=', id).where('erased_at', 'is', null);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Erases the personal data and blind indexes of a customer; the row stays for the payments that name it. */
export async function eraseCustomerRow(db: Db, id: number): Promise<void> {
  await db
    .updateTable('customers')
    .set({
      name_encrypted: null,
      email_encrypted: null,
      phone_encrypted: null,
      email_hash: null,
      phone_hash: null,
      erased_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .execute();
}

/** Every customer of the brand in the mode, oldest first (export). */
export async function selectAllCustomers(db: Db, brandId: number, mode: Mode): Promise<CustomerRow[]> {
  return db
    .selectFrom('customers')
    .select(COLUMNS)
    .where('brand_id', '=', brandId)
    .where('mode', '=', mode)
    .where('erased_at', 'is', null)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
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
  const ofMode = db.selectFrom('customers').where('brand_id', '=', brandId).where('mode', '=', mode).where('erased_at', 'is', null);
  const { total } = await ofMode.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
  const rows = await ofMode.select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(total) };
}

/** Which of these blind indexes a customer of the brand (in the mode) has already. */
export async function selectTakenHashes(
  db: Db,
  brandId: number,
  mode: Mode,
  h: { emailHashes: string[]; phoneHashes: string[] },
): Promise<{ email: Set<string>; phone: Set<string> }> {
  const email = new Set<string>();
  const phone = new Set<string>();
  if (h.emailHashes.length === 0 && h.phoneHashes.length === 0) return { email, phone };
  const rows = await db
    .selectFrom('customers')
    .select(['email_hash', 'phone_hash'])
    .where('brand_id', '=', brandId)
    .where('mode', '=', mode)
    .where((eb) =>
      eb.or([
        ...(h.emailHashes.length > 0 ? [eb('email_hash', 'in', h.emailHashes)] : []),
        ...(h.phoneHashes.length > 0 ? [eb('phone_hash', 'in', h.phoneHashes)] : []),
      ]),
    )
    .execute();
  for (const r of rows) {
    if (r.email_hash) email.add(r.email_hash);
    if (r.phone_hash) phone.add(r.phone_hash);
  }
  return { email, phone };
}
