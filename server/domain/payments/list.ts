import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { PaymentListItemResource } from '../../../contract/merchant/payments.ts';
import { blindIndex } from '../../infra/crypto/blind-index.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { maskEmail, maskPhone, normalizeEmail, normalizePhone } from '../customers/normalize.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../customers/service.ts';
import { toPaymentResource } from './view.ts';
import { paymentListPage, unpaidIntents, type UnpaidShownStatus } from './queries/list.ts';
import type { Db } from '../db.ts';

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
  const { rows, total } = await paymentListPage(em, brandId, mode, {
    page: f.page, perPage: f.perPage, status: f.status, gateway: f.gateway, reference: f.reference, from: f.from, to: f.to, customerHashes: hashes,
  });
  const live = mode === 'live';
  const items = rows.map((r): PaymentListItemResource => {
    const { customer: _none, ...payment } = toPaymentResource(r, null);
    return { ...payment, customer: maskedCustomer(keys, r), livemode: live };
  });
  return { items, total };
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
  status: UnpaidShownStatus;
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
  const rows = await unpaidIntents(em, { reference: ref, paymentId: UUID_RE.test(ref) ? ref.toLowerCase() : null, brandId: f.brandId, brandIds: f.brandIds, mode: f.mode });
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
