import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { PaymentListItemResource } from '../../../contract/merchant/payments.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { blindIndex } from '../../infra/crypto/blind-index.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { maskEmail, maskPhone, normalizeEmail, normalizePhone } from '../customers/normalize.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../customers/service.ts';
import { PAYMENT_COLUMNS, PAYMENT_FROM, toPaymentResource, type PaymentRow } from './view.ts';

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
const SHOWN_STATUS = `CASE WHEN i.status = 'canceled' THEN 'canceled'
  WHEN t.id IS NOT NULL THEN t.status
  WHEN i.status = 'expired' OR i.expires_at <= now() THEN 'expired'
  ELSE 'pending' END`;

type ListRow = PaymentRow & {
  customer_uuid: string | null;
  customer_brand_id: string | null;
  customer_name_encrypted: string | null;
  customer_email_encrypted: string | null;
  customer_phone_encrypted: string | null;
};

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
  em: EntityManager,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  f: PaymentListFilter,
): Promise<{ items: PaymentListItemResource[]; total: number }> {
  const where = ['i.brand_id = ?', 'i.mode = ?'];
  const params: unknown[] = [brandId, mode];
  if (f.status) {
    where.push(`(${SHOWN_STATUS}) = ?`);
    params.push(f.status);
  }
  if (f.gateway) {
    where.push('g.code = ?');
    params.push(f.gateway);
  }
  if (f.reference) {
    where.push('i.reference = ?');
    params.push(f.reference);
  }
  for (const [kind, value] of [['email', f.customerEmail], ['phone', f.customerPhone]] as const) {
    if (value === undefined) continue;
    where.push(`i.customer_id IN (SELECT id FROM customers WHERE brand_id = ? AND mode = ? AND ${kind}_hash = ?)`);
    params.push(brandId, mode, customerHash(keys, brandId, kind, value));
  }
  if (f.from) {
    where.push("i.created_at >= (?::date)::timestamp AT TIME ZONE 'UTC'");
    params.push(f.from);
  }
  if (f.to) {
    // Inclusive: everything before the start of the next UTC day.
    where.push("i.created_at < ((?::date + 1)::timestamp AT TIME ZONE 'UTC')");
    params.push(f.to);
  }
  const clause = `WHERE ${where.join(' AND ')}`;
  const [count] = await em.execute<Array<{ total: string }>>(`SELECT count(*) AS total ${PAYMENT_FROM} ${clause}`, params);
  const rows = await em.execute<ListRow[]>(
    `SELECT ${PAYMENT_COLUMNS}, c.uuid AS customer_uuid, c.brand_id AS customer_brand_id, c.name_encrypted AS customer_name_encrypted,
            c.email_encrypted AS customer_email_encrypted, c.phone_encrypted AS customer_phone_encrypted
       ${PAYMENT_FROM}
       LEFT JOIN customers c ON c.id = i.customer_id
       ${clause}
      ORDER BY i.created_at DESC, i.id DESC LIMIT ? OFFSET ?`,
    [...params, f.perPage, (f.page - 1) * f.perPage],
  );
  const live = mode === 'live';
  const items = rows.map((r): PaymentListItemResource => {
    const { customer: _none, ...payment } = toPaymentResource(r, null);
    return { ...payment, customer: maskedCustomer(keys, r), livemode: live };
  });
  return { items, total: Number(count!.total) };
}

function maskedCustomer(keys: PersonalDataKeys, r: ListRow): PaymentListItemResource['customer'] {
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
