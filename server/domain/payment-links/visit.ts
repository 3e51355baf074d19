import { AppError } from '../../../contract/common/errors.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { compareMoney, toMoney } from '../money/decimal.ts';
import { createIntent } from '../payments/intents.ts';
import { transaction, type Db } from '../db.ts';
import { lockLink, recordLinkPayment, selectLinkWithBrand, type PaymentLinkWithBrandRow } from './queries.ts';
import { isPaymentLinkId, linkStatus, type LinkStatus } from './service.ts';

/** What the public link page needs: the link as the customer may see it. */
export interface PublicLink {
  publicId: string;
  brandId: number;
  brandName: string;
  brandActive: boolean;
  amount: string | null;
  minAmount: string | null;
  maxAmount: string | null;
  currency: string;
  description: string | null;
  status: LinkStatus;
  cancelUrl: string | null;
}

type Row = PaymentLinkWithBrandRow;

async function loadRow(em: Db, publicId: string, lock: boolean): Promise<Row | null> {
  if (!isPaymentLinkId(publicId)) return null;
  // Locked in a statement of its own, before the read (lockLink says why).
  if (lock && !(await lockLink(em, publicId))) return null;
  return (await selectLinkWithBrand(em, publicId)) ?? null;
}

function toPublic(r: Row): PublicLink {
  return {
    publicId: r.public_id,
    brandId: r.brand_id,
    brandName: r.brand_name,
    brandActive: r.brand_status === 'active',
    amount: r.amount,
    minAmount: r.min_amount,
    maxAmount: r.max_amount,
    currency: r.currency,
    description: r.description,
    status: linkStatus(r),
    cancelUrl: r.cancel_url,
  };
}

export async function findPublicLink(em: Db, publicId: string): Promise<PublicLink | null> {
  const r = await loadRow(em, publicId, false);
  return r ? toPublic(r) : null;
}

const ENTERED_RE = /^\d{1,12}(?:\.\d{1,2})?$/;

/** The customer's amount: digits with up to two decimals, within the link's bounds (VALIDATION_ERROR on `amount`). */
function enteredAmount(link: Pick<PublicLink, 'minAmount' | 'maxAmount' | 'currency'>, raw: string | undefined): string {
  const text = (raw ?? '').trim().replace(/,/g, '');
  if (!ENTERED_RE.test(text)) throw new AppError('VALIDATION_ERROR', 'Enter an amount like 500 or 500.50', { field: 'amount' });
  const amount = toMoney(text);
  const min = link.minAmount ?? '0.01';
  if (compareMoney(amount, min) < 0) throw new AppError('VALIDATION_ERROR', `Enter at least ${min} ${link.currency}`, { field: 'amount' });
  if (link.maxAmount !== null && compareMoney(amount, link.maxAmount) > 0) {
    throw new AppError('VALIDATION_ERROR', `Enter at most ${link.maxAmount} ${link.currency}`, { field: 'amount' });
  }
  return amount;
}

export type VisitResult = { kind: 'created'; paymentId: string } | { kind: 'refused'; link: PublicLink } | { kind: 'not_found' };

/**
 * A visit creates a payment intent for the link and the caller redirects to its
 * checkout. The link row is locked for the whole visit, so two visitors of a
 * single-use link at once create one intent: the second sees the first's
 * intent (committed before the lock was released) and is refused. Refused
 * (nothing written): deactivated, expired, a single-use link already used, a
 * disabled brand. A bad customer-entered amount is a VALIDATION_ERROR; a
 * refusal of createIntent (no gateway takes the amount) passes through.
 */
export async function visitPaymentLink(
  em: Db,
  keys: PersonalDataKeys,
  publicId: string,
  input: { amount?: string },
  opts: { publicBaseUrl: string },
): Promise<VisitResult> {
  return transaction(em, async (tx): Promise<VisitResult> => {
    const r = await loadRow(tx, publicId, true);
    if (!r) return { kind: 'not_found' };
    const link = toPublic(r);
    if (!link.brandActive || link.status !== 'active') return { kind: 'refused', link };
    const amount = r.amount ?? enteredAmount(link, input.amount);
    const created = await createIntent(tx, keys, r.brand_id, r.mode, {
      amount,
      currency: r.currency,
      reference: r.reference,
      successUrl: r.success_url,
      cancelUrl: r.cancel_url,
    }, { publicBaseUrl: opts.publicBaseUrl });
    await recordLinkPayment(tx, r.id, created.payment_id);
    return { kind: 'created', paymentId: created.payment_id };
  });
}
