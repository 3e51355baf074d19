import { sql } from 'kysely';
import type { Mode } from '../../../../contract/vocabulary.ts';
import { utcDayAfter, utcDayStart, type Db } from '../../db.ts';
import { scopeParam } from '../../brands/scope.ts';
import { paymentQuery } from './payments.ts';

/** Payments as the merchant list and the console's unpaid search read them (payments/list.ts). */

/**
 * The status the payment view shows (view.ts toPaymentResource), in SQL so the
 * status filter and the shown status can never disagree: canceled wins, then the
 * latest transaction's status, else the intent's (expired by time already).
 */
const SHOWN_STATUS = sql<string>`CASE WHEN intent.status = 'canceled' THEN 'canceled'
  WHEN t.id IS NOT NULL THEN t.status
  WHEN intent.status = 'expired' OR intent.expires_at <= now() THEN 'expired'
  ELSE 'pending' END`;

export interface PaymentPageFilter {
  page: number;
  perPage: number;
  /** The shown status (SHOWN_STATUS). */
  status?: string;
  gateway?: string;
  reference?: string;
  /** Inclusive calendar dates (UTC), `YYYY-MM-DD`. */
  from?: string;
  to?: string;
  /** The customer's keyed hashes (customers' `email_hash` / `phone_hash`), each of which must match. */
  customerHashes: ReadonlyArray<{ column: 'email_hash' | 'phone_hash'; hash: string }>;
}

/** A page of the brand's payments in one mode, newest first, with their customers' encrypted columns, and how many match in all. */
export async function paymentListPage(em: Db, brandId: number, mode: Mode, f: PaymentPageFilter) {
  const matching = paymentQuery(em)
    .where('intent.brand_id', '=', brandId)
    .where('intent.mode', '=', mode)
    .$if(f.status !== undefined, (q) => q.where(SHOWN_STATUS, '=', f.status!))
    .$if(f.gateway !== undefined, (q) => q.where('g.code', '=', f.gateway!))
    .$if(f.reference !== undefined, (q) => q.where('intent.reference', '=', f.reference!))
    .$if(f.from !== undefined, (q) => q.where('intent.created_at', '>=', utcDayStart(f.from!)))
    // Inclusive: everything before the start of the next UTC day.
    .$if(f.to !== undefined, (q) => q.where('intent.created_at', '<', utcDayAfter(f.to!)));
  const filtered = f.customerHashes.reduce(
    (q, { column, hash }) =>
      q.where('intent.customer_id', 'in', (eb) =>
        eb.selectFrom('customers').select('id').where('brand_id', '=', brandId).where('mode', '=', mode).where(column, '=', hash)),
    matching,
  );
  const count = await filtered.clearSelect().select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
  const rows = await filtered
    .leftJoin('customers as customer', 'customer.id', 'intent.customer_id')
    .select(['customer.uuid as customer_uuid', 'customer.brand_id as customer_brand_id', 'customer.name_encrypted as customer_name_encrypted',
      'customer.email_encrypted as customer_email_encrypted', 'customer.phone_encrypted as customer_phone_encrypted'])
    .orderBy('intent.created_at', 'desc')
    .orderBy('intent.id', 'desc')
    .limit(f.perPage)
    .offset((f.page - 1) * f.perPage)
    .execute();
  return { rows, total: Number(count.total) };
}

export type UnpaidShownStatus = 'pending' | 'expired' | 'canceled';

/**
 * Intents without any transaction whose merchant reference is `reference` or
 * (when given) whose id is `paymentId`, of the brand(s) and mode when given,
 * newest first, at most 20.
 */
export async function unpaidIntents(
  em: Db,
  f: { reference: string; paymentId: string | null; brandId?: number; brandIds?: readonly number[] | null; mode?: Mode },
) {
  return em
    .selectFrom('payment_intents as i')
    .select(['i.uuid', 'i.brand_id', 'i.mode', 'i.amount', 'i.currency', 'i.reference', 'i.created_at', 'i.expires_at',
      sql<UnpaidShownStatus>`CASE WHEN i.status = 'canceled' THEN 'canceled' WHEN i.status = 'expired' OR i.expires_at <= now() THEN 'expired' ELSE 'pending' END`.as('shown_status')])
    .where((eb) => eb.or([eb('i.reference', '=', f.reference), ...(f.paymentId !== null ? [eb('i.uuid', '=', f.paymentId)] : [])]))
    .where((eb) => eb.not(eb.exists(eb.selectFrom('transactions as t').select('t.id').whereRef('t.intent_id', '=', 'i.id'))))
    .$if(f.brandId !== undefined, (q) => q.where('i.brand_id', '=', f.brandId!))
    .$if(f.brandIds != null, (q) => q.where('i.brand_id', 'in', scopeParam(f.brandIds!)))
    .$if(f.mode !== undefined, (q) => q.where('i.mode', '=', f.mode!))
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id', 'desc')
    .limit(20)
    .execute();
}
