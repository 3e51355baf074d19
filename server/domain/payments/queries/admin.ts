import { sql } from 'kysely';
import type { Mode } from '../../../../contract/vocabulary.ts';
import { utcDayAfter, utcDayStart, type Db } from '../../db.ts';
import { scopeParam } from '../../brands/scope.ts';
import type { TransactionStatus } from '../entities.ts';

/** Transactions as the admin API and the console read them (payments/admin.ts). */

function fromTransactions(em: Db) {
  return em
    .selectFrom('transactions as t')
    .innerJoin('payment_intents as i', 'i.id', 't.intent_id')
    .innerJoin('gateways as g', 'g.id', 't.gateway_id')
    .leftJoin('wallet_accounts as wa', 'wa.id', 't.wallet_account_id');
}

// Not `g.code as gateway`: db.ts would convert it as the transaction's `gateway` relation (a number).
const COLUMNS = [
  't.id', 't.trx_id', 'i.uuid as payment_id', 't.brand_id', 't.mode', 'g.code as gateway_code', 'g.type as gateway_type', 't.method', 't.gateway_trx_id',
  't.amount', 't.currency', 't.fee', 't.exchange_rate', 'i.amount as requested_amount', 'i.currency as requested_currency', 'i.reference',
  't.status', 't.failure_reason', 't.completion_source', 't.created_at', 't.completed_at', 't.sender_number_encrypted',
  'wa.id as wallet_account_id', 'wa.number as wallet_account_number', 'wa.label as wallet_account_label',
] as const;

const selectTransactions = (em: Db) => fromTransactions(em).select(COLUMNS);
export type AdminTransactionRow = Awaited<ReturnType<ReturnType<typeof selectTransactions>['executeTakeFirstOrThrow']>>;

export interface TransactionFilter {
  page: number;
  perPage: number;
  brandId?: number;
  /** A console operator's brands; absent or null: every brand. */
  brandIds?: number[] | null;
  mode?: Mode;
  status?: TransactionStatus;
  gateway?: string;
  /** Service reference, or gateway reference (case-insensitive). */
  trxId?: string;
  /** Service trx id, gateway trx id (case-insensitive), payment id (intent UUID) or merchant reference. */
  reference?: string;
  /** The customer's e-mail or phone, as typed; normalised like the merchant API's search. */
  customerEmail?: string;
  customerPhone?: string;
  /** Inclusive UTC dates, `YYYY-MM-DD`. */
  from?: string;
  to?: string;
}

/** A customer filter: the customer's keyed hashes, one per brand in scope. */
export interface CustomerMatch {
  kind: 'email' | 'phone';
  brandIds: number[];
  hashes: string[];
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A page of transactions, newest first, and how many match in all. */
export async function adminTransactionPage(em: Db, f: TransactionFilter, customers: readonly CustomerMatch[]): Promise<{ rows: AdminTransactionRow[]; total: number }> {
  let q = fromTransactions(em);
  if (f.brandId !== undefined) q = q.where('t.brand_id', '=', f.brandId);
  if (f.brandIds) q = q.where('t.brand_id', 'in', scopeParam(f.brandIds));
  if (f.mode) q = q.where('t.mode', '=', f.mode);
  if (f.status) q = q.where('t.status', '=', f.status);
  if (f.gateway) q = q.where('g.code', '=', f.gateway);
  if (f.trxId) {
    const trxId = f.trxId;
    q = q.where((eb) => eb.or([eb('t.trx_id', '=', trxId), eb(sql`upper(t.gateway_trx_id)`, '=', sql`upper(${trxId})`)]));
  }
  if (f.reference) {
    const ref = f.reference;
    q = q.where((eb) =>
      eb.or([
        eb('t.trx_id', '=', ref),
        eb(sql`upper(t.gateway_trx_id)`, '=', sql`upper(${ref})`),
        eb('i.reference', '=', ref),
        ...(UUID_RE.test(ref) ? [eb('i.uuid', '=', ref.toLowerCase())] : []),
      ]),
    );
  }
  for (const { kind, brandIds, hashes } of customers) {
    const column = kind === 'email' ? 'email_hash' : 'phone_hash';
    // Not correlated with the outer row: the customers are found first (brand, hash: their unique
    // index), then their intents (payment_intents_customer_idx). A hash is keyed by its brand, so it
    // names that brand's customer only, and an intent's customer is of the intent's brand.
    q = q.where('i.customer_id', 'in', (eb) =>
      eb
        .selectFrom('customers as c')
        .select('c.id')
        .where('c.brand_id', 'in', scopeParam(brandIds))
        .where(`c.${column}`, 'in', hashes.length ? hashes : ['']),
    );
  }
  // Whole UTC days, computed by the database from the date text as before.
  if (f.from) q = q.where('t.created_at', '>=', utcDayStart(f.from));
  if (f.to) q = q.where('t.created_at', '<', utcDayAfter(f.to));
  const { n } = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q.select(COLUMNS).orderBy('t.created_at', 'desc').orderBy('t.id', 'desc').limit(f.perPage).offset((f.page - 1) * f.perPage).execute();
  return { rows, total: Number(n) };
}

export async function adminTransactionRow(em: Db, transactionId: number): Promise<AdminTransactionRow | undefined> {
  return selectTransactions(em).where('t.id', '=', transactionId).executeTakeFirst();
}

/** The brands a filter names: one brand, the operator's brands, or every brand. */
export async function brandIdsInScope(em: Db, f: { brandId?: number; brandIds?: number[] | null }): Promise<number[]> {
  let brands = em.selectFrom('brands').select('id');
  if (f.brandId !== undefined) brands = brands.where('id', '=', f.brandId);
  if (f.brandIds) brands = brands.where('id', 'in', scopeParam(f.brandIds));
  return (await brands.execute()).map((b) => b.id);
}

/** The brand's SMS records that matched the transaction or name it as a candidate, newest first (at most 50). */
export async function smsOfTransaction(em: Db, brandId: number, transactionId: number) {
  return em
    .selectFrom('sms_records')
    .select(['id', 'match_status', 'transaction_id', 'parsed_amount', 'parsed_trx_id', 'confidence', 'received_at'])
    .where('brand_id', '=', brandId)
    .where((eb) => eb.or([eb('transaction_id', '=', transactionId), sql<boolean>`${transactionId}::bigint = ANY(candidate_ids)`]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(50)
    .execute();
}
