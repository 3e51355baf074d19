import { sql, type InsertObject, type UpdateObject } from 'kysely';
import type { InvoiceStatus, Mode } from '../../../contract/vocabulary.ts';
import type { DB, Db } from '../db.ts';

/** The invoice (`v`) with what every view of it shows: its customer's public id and (encrypted) name and e-mail, and its brand. */
function invoiceQuery(db: Db) {
  return db
    .selectFrom('invoices as v')
    .innerJoin('customers as c', 'c.id', 'v.customer_id')
    .innerJoin('brands as b', 'b.id', 'v.brand_id')
    .selectAll('v')
    // The driver would make a `date` a Date at local midnight; the day as text is what every view shows.
    .select(sql<string>`to_char(v.due_date, 'YYYY-MM-DD')`.as('due_day'))
    .select(['c.uuid as customer_uuid', 'c.name_encrypted as customer_name_encrypted', 'c.email_encrypted as customer_email_encrypted'])
    .select(['b.name as brand_name', 'b.status as brand_status', 'b.timezone as brand_timezone']);
}

export type InvoiceRow = Awaited<ReturnType<ReturnType<typeof invoiceQuery>['executeTakeFirstOrThrow']>>;

/**
 * The next number of the brand and mode. The counter row's lock is held until
 * the caller's transaction ends, so concurrent creates take numbers one after
 * another, and a create that rolls back gives its number back (no gaps).
 */
export async function allocateInvoiceNumber(tx: Db, brandId: number, mode: Mode): Promise<number> {
  const row = await tx
    .insertInto('invoice_counters')
    .values({ brand_id: brandId, mode, last_number: 1 })
    .onConflict((oc) => oc.columns(['brand_id', 'mode']).doUpdateSet({ last_number: sql<number>`invoice_counters.last_number + 1` }))
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return row.last_number;
}

export async function insertInvoice(tx: Db, row: InsertObject<DB, 'invoices'>): Promise<number> {
  return (await tx.insertInto('invoices').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function selectInvoiceById(db: Db, id: number): Promise<InvoiceRow> {
  return invoiceQuery(db).where('v.id', '=', id).executeTakeFirstOrThrow();
}

/** The brand's invoice of the mode by its public id; `lock` takes its row lock first, in a statement of its own. */
export async function selectInvoice(db: Db, brandId: number, mode: Mode, uuid: string, opts: { lock?: boolean } = {}): Promise<InvoiceRow | undefined> {
  if (opts.lock) {
    const locked = await db.selectFrom('invoices').select('id').where('uuid', '=', uuid).where('brand_id', '=', brandId).where('mode', '=', mode).forUpdate().executeTakeFirst();
    if (!locked) return undefined;
  }
  return invoiceQuery(db).where('v.uuid', '=', uuid).where('v.brand_id', '=', brandId).where('v.mode', '=', mode).executeTakeFirst();
}

/** Any brand's invoice by its public id (the console: the caller checks the operator's brand scope). */
export async function selectInvoiceAnyBrand(db: Db, uuid: string, opts: { lock?: boolean } = {}): Promise<InvoiceRow | undefined> {
  if (opts.lock && !(await db.selectFrom('invoices').select('id').where('uuid', '=', uuid).forUpdate().executeTakeFirst())) return undefined;
  return invoiceQuery(db).where('v.uuid', '=', uuid).executeTakeFirst();
}

/** By the hosted page's token; `lock` as in selectInvoice. */
export async function selectInvoiceByToken(db: Db, token: string, opts: { lock?: boolean } = {}): Promise<InvoiceRow | undefined> {
  if (opts.lock && !(await db.selectFrom('invoices').select('id').where('token', '=', token).forUpdate().executeTakeFirst())) return undefined;
  return invoiceQuery(db).where('v.token', '=', token).executeTakeFirst();
}

export interface InvoiceFilter {
  brandIds?: readonly number[] | null;
  brandId?: number;
  mode?: Mode;
  status?: InvoiceStatus;
  customerUuid?: string;
}

/** One page of invoices, newest first, and how many match. */
export async function selectInvoicePage(db: Db, f: InvoiceFilter, page: { limit: number; offset: number }): Promise<{ rows: InvoiceRow[]; total: number }> {
  let q = invoiceQuery(db);
  if (f.brandId !== undefined) q = q.where('v.brand_id', '=', f.brandId);
  if (f.brandIds) q = f.brandIds.length === 0 ? q.where(sql<boolean>`false`) : q.where('v.brand_id', 'in', [...f.brandIds]);
  if (f.mode) q = q.where('v.mode', '=', f.mode);
  if (f.status) q = q.where('v.status', '=', f.status);
  if (f.customerUuid) q = q.where('c.uuid', '=', f.customerUuid);
  const rows = await q.orderBy('v.id', 'desc').limit(page.limit).offset(page.offset).execute();
  const count = await q.clearSelect().select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

export async function updateInvoiceRow(tx: Db, id: number, set: UpdateObject<DB, 'invoices'>): Promise<void> {
  await tx.updateTable('invoices').set({ ...set, updated_at: sql<Date>`now()` }).where('id', '=', id).execute();
}

/** The payments made for an invoice, newest first. */
export async function selectInvoicePayments(db: Db, invoiceId: number) {
  return db
    .selectFrom('payment_intents')
    .select(['uuid', 'amount', 'status', 'created_at', 'completed_at', 'expires_at'])
    .where('invoice_id', '=', invoiceId)
    .orderBy('id', 'desc')
    .execute();
}

/** A pending, unexpired payment of the invoice for exactly `amount`: a second click on Pay continues it instead of opening another. */
export async function selectOpenInvoicePayment(tx: Db, invoiceId: number, amount: string): Promise<string | undefined> {
  const row = await tx
    .selectFrom('payment_intents')
    .select('uuid')
    .where('invoice_id', '=', invoiceId)
    .where('status', '=', 'pending')
    .where('amount', '=', amount)
    .where('expires_at', '>', sql<Date>`now() + interval '5 minutes'`)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row?.uuid;
}

/** Ties a payment to the invoice it pays and to the invoice's customer. */
export async function linkInvoicePayment(tx: Db, paymentUuid: string, invoiceId: number, customerId: number): Promise<void> {
  await tx.updateTable('payment_intents').set({ invoice_id: invoiceId, customer_id: customerId }).where('uuid', '=', paymentUuid).execute();
}

/** The customer of the brand and mode with this public id; an erased (deleted) customer is not billed again. */
export async function selectCustomerId(db: Db, brandId: number, mode: Mode, uuid: string): Promise<number | undefined> {
  const row = await db.selectFrom('customers').select('id').where('uuid', '=', uuid).where('brand_id', '=', brandId).where('mode', '=', mode).where('erased_at', 'is', null).executeTakeFirst();
  return row?.id;
}

/**
 * Marks open invoices past their due date (in their brand's time zone) overdue,
 * locking them and skipping rows another worker holds; returns them. A row moves
 * open → overdue once, so its event is recorded once.
 */
export async function markDueInvoicesOverdue(tx: Db, limit: number): Promise<number[]> {
  const due = await tx
    .selectFrom('invoices as v')
    .innerJoin('brands as b', 'b.id', 'v.brand_id')
    .select('v.id')
    .where('v.status', '=', 'open')
    .where(sql<boolean>`v.due_date < (now() AT TIME ZONE b.timezone)::date`)
    .orderBy('v.id')
    .limit(limit)
    .forUpdate('v')
    .skipLocked()
    .execute();
  if (due.length === 0) return [];
  const rows = await tx
    .updateTable('invoices')
    .set({ status: 'overdue', overdue_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('id', 'in', due.map((d) => d.id))
    .where('status', '=', 'open')
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** The invoices the given just-completed intents pay, with each intent's amount (settle.ts). */
export function invoicePaymentsOf(db: Db, intentIds: readonly number[]) {
  return db
    .selectFrom('payment_intents')
    .select(['invoice_id', 'amount', 'uuid'])
    .where('id', 'in', [...intentIds])
    .where('invoice_id', 'is not', null)
    .orderBy('id')
    .execute();
}

/** Locks the invoices in id order, in a statement of its own (no deadlock between two completions). */
export async function lockInvoices(db: Db, ids: readonly number[]): Promise<void> {
  await db.selectFrom('invoices').select('id').where('id', 'in', [...ids]).orderBy('id').forUpdate().execute();
}

/** What settling a payment needs of each (locked) invoice, read as committed. */
export function invoicesToSettle(db: Db, ids: readonly number[]) {
  return db
    .selectFrom('invoices as v')
    .innerJoin('customers as c', 'c.id', 'v.customer_id')
    .select(['v.id', 'v.uuid', 'v.brand_id', 'v.mode', 'v.number', 'v.status', 'v.currency', 'v.total', 'v.amount_paid', 'c.uuid as customer_uuid'])
    .select(sql<string>`to_char(v.due_date, 'YYYY-MM-DD')`.as('due_day'))
    .where('v.id', 'in', [...ids])
    .execute();
}

/** Records an invoice's new amount paid, and makes it `paid` when `nowPaid`. */
export async function addInvoicePayment(db: Db, id: number, amountPaid: string, nowPaid: boolean): Promise<void> {
  await db
    .updateTable('invoices')
    .set({ amount_paid: amountPaid, updated_at: sql<Date>`now()`, ...(nowPaid ? { status: 'paid' as const, paid_at: sql<Date>`now()` } : {}) })
    .where('id', '=', id)
    .execute();
}
