import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { PaymentListItemResource } from '../../../contract/merchant/payments.ts';
import { blindIndex } from '../../infra/crypto/blind-index.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { maskEmail, maskPhone, normalizeEmail, normalizePhone } from '../customers/normalize.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../customers/service.ts';
import { sql } from 'kysely';
import { toPaymentResource } from './view.ts';
import { paymentQuery } from './queries/payments.ts';
import type { Db } from '../db.ts';
import { scopeParam } from '../brands/scope.ts';

export interface PaymentListFilter {
  page: number;
  perPage: number;
  status?: string;
  gateway?: string;
  reference?: string;
  customerEmail?: string;
  customerPhone?: string;
  /** Inclusive calendar dates (UTC), `YYYY-MM-DD`. */
  from?: string;
  to?: string;
}

/**
 * The status the payment view shows (view.ts toPaymentResource), in SQL so the
 * status filter and the shown status can never disagree: canceled wins, then the
 * latest transaction's status, else the intent's (expired by time already).
 */
const SHOWN_STATUS = sql<string>`CASE WHEN intent.status = 'canceled' THEN 'canceled'
  WHEN t.id IS NOT NULL THEN t.status
  WHEN intent.status = 'expired' OR intent.expires_at <= now() THEN 'expired'
  ELSE 'pending' END`;

/**
 * A customer filter names one customer through the brand's keyed hash of the
 * normalised value, so nothing is decrypted to search. A value that cannot be
 * normalised is a 400 on its parameter (it could never match).
 */
function customerHash(keys: PersonalDataKeys, brandId: number, kind: 'email' | 'phone', value: string): string {
  const normalised = kind === 'email' ? normalizeEmail(value) : normalizePhone(value);
  if (!normalised) {
    throw new AppError('VALIDATION_ERROR', kind === 'email' ? 'Must be a valid email address' : 'Must be a valid phone number', {
      field: kind === 'email' ? 'customer_email' : 'customer_phone',
    });
  }
  return blindIndex(keys.blindIndexKey, brandId, kind, normalised);
}

/** The brand's payments in one mode, newest first; `total` counts every match. Only the page's customers are decrypted, to mask them. */
export async function listPayments(
  em: Db,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  f: PaymentListFilter,
): Promise<{ items: PaymentListItemResource[]; total: number }> {
  const hashes = (['email', 'phone'] as const).flatMap((kind) => {
    const value = kind === 'email' ? f.customerEmail : f.customerPhone;
    return value === undefined ? [] : [{ column: `${kind}_hash` as const, hash: customerHash(keys, brandId, kind, value) }];
  });
  const matching = paymentQuery(em)
    .where('intent.brand_id', '=', brandId)
    .where('intent.mode', '=', mode)
    .$if(f.status !== undefined, (q) => q.where(SHOWN_STATUS, '=', f.status!))
    .$if(f.gateway !== undefined, (q) => q.where('g.code', '=', f.gateway!))
    .$if(f.reference !== undefined, (q) => q.where('intent.reference', '=', f.reference!))
    .$if(f.from !== undefined, (q) => q.where('intent.created_at', '>=', sql<Date>`(${f.from}::date)::timestamp AT TIME ZONE 'UTC'`))
    // Inclusive: everything before the start of the next UTC day.
    .$if(f.to !== undefined, (q) => q.where('intent.created_at', '<', sql<Date>`((${f.to}::date + 1)::timestamp AT TIME ZONE 'UTC')`));
  const filtered = hashes.reduce(
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
  const live = mode === 'live';
  const items = rows.map((r): PaymentListItemResource => {
    const { customer: _none, ...payment } = toPaymentResource(r, null);
    return { ...payment, customer: maskedCustomer(keys, r), livemode: live };
  });
  return { items, total: Number(count.total) };
}

interface CustomerColumns {
  customer_id: number | null;
  customer_uuid: string | null;
  customer_brand_id: number | null;
  customer_name_encrypted: string | null;
  customer_email_encrypted: string | null;
  customer_phone_encrypted: string | null;
}

function maskedCustomer(keys: PersonalDataKeys, r: CustomerColumns): PaymentListItemResource['customer'] {
  if (r.customer_id === null || r.customer_uuid === null) return null;
  const b = customerBinding(r.customer_brand_id!, r.customer_uuid);
  const open = (token: string | null, context: string) => (token === null ? null : keys.pii.decrypt(token, context, b));
  const email = open(r.customer_email_encrypted, CUSTOMER_CONTEXT.email);
  const phone = open(r.customer_phone_encrypted, CUSTOMER_CONTEXT.phone);
  return {
    name: open(r.customer_name_encrypted, CUSTOMER_CONTEXT.name),
    email_masked: email === null ? null : maskEmail(email),
    phone_masked: phone === null ? null : maskPhone(phone),
  };
}

export interface UnpaidPayment {
  payment_id: string;
  brand_id: number;
  mode: Mode;
  amount: string;
  currency: string;
  reference: string | null;
  status: 'pending' | 'expired' | 'canceled';
  created_at: string;
  expires_at: string;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The console's search for payments nobody has started paying: an intent has
 * no transaction until the customer picks a gateway, so the transaction search
 * cannot find it, yet a merchant asking "where is order 123?" names exactly such
 * a payment. By payment id or merchant reference (exact), newest first, at most 20.
 */
export async function findUnpaidPayments(
  em: Db,
  f: { reference: string; brandId?: number; brandIds?: readonly number[] | null; mode?: Mode },
): Promise<UnpaidPayment[]> {
  const ref = f.reference.trim();
  if (ref === '') return [];
  const rows = await em
    .selectFrom('payment_intents as i')
    .select(['i.uuid', 'i.brand_id', 'i.mode', 'i.amount', 'i.currency', 'i.reference', 'i.created_at', 'i.expires_at',
      sql<UnpaidPayment['status']>`CASE WHEN i.status = 'canceled' THEN 'canceled' WHEN i.status = 'expired' OR i.expires_at <= now() THEN 'expired' ELSE 'pending' END`.as('shown_status')])
    .where((eb) => eb.or([eb('i.reference', '=', ref), ...(UUID_RE.test(ref) ? [eb('i.uuid', '=', ref.toLowerCase())] : [])]))
    .where((eb) => eb.not(eb.exists(eb.selectFrom('transactions as t').select('t.id').whereRef('t.intent_id', '=', 'i.id'))))
    .$if(f.brandId !== undefined, (q) => q.where('i.brand_id', '=', f.brandId!))
    .$if(f.brandIds != null, (q) => q.where('i.brand_id', 'in', scopeParam(f.brandIds!)))
    .$if(f.mode !== undefined, (q) => q.where('i.mode', '=', f.mode!))
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id', 'desc')
    .limit(20)
    .execute();
  return rows.map((r) => ({
    payment_id: r.uuid,
    brand_id: r.brand_id,
    mode: r.mode,
    amount: r.amount,
    currency: r.currency,
    reference: r.reference,
    status: r.shown_status,
    created_at: r.created_at.toISOString(),
    expires_at: r.expires_at.toISOString(),
  }));
}
