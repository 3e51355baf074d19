import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { compareMoney, toMoney } from '../money/decimal.ts';
import { createIntent } from '../payments/intents.ts';
import { isPaymentLinkId, LINK_COLUMNS, linkStatus, type LinkStatus, type PaymentLinkRow } from './service.ts';

/** What the public link page needs: the link as the customer may see it. */
export interface PublicLink {
  publicId: string;
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

type Row = PaymentLinkRow & { brand_name: string; brand_status: string };

async function loadRow(em: EntityManager, publicId: string, lock: boolean): Promise<Row | null> {
  if (!isPaymentLinkId(publicId)) return null;
  // Locked in a statement of its own: a statement that waited for the lock
  // still evaluates its subqueries on the snapshot it started with, and would
  // not see the intent the previous visitor just committed.
  if (lock && !(await em.execute('SELECT id FROM payment_links WHERE public_id = ? FOR UPDATE', [publicId]))[0]) return null;
  const rows = await em.execute<Row[]>(
    `SELECT ${LINK_COLUMNS}, b.name AS brand_name, b.status AS brand_status
       FROM payment_links l JOIN brands b ON b.id = l.brand_id WHERE l.public_id = ?`,
    [publicId],
  );
  return rows[0] ?? null;
}

function toPublic(r: Row): PublicLink {
  return {
    publicId: r.public_id,
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

export async function findPublicLink(em: EntityManager, publicId: string): Promise<PublicLink | null> {
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
  em: EntityManager,
  keys: PersonalDataKeys,
  publicId: string,
  input: { amount?: string },
  opts: { publicBaseUrl: string },
): Promise<VisitResult> {
  return em.transactional(async (tx): Promise<VisitResult> => {
    const r = await loadRow(tx, publicId, true);
    if (!r) return { kind: 'not_found' };
    const link = toPublic(r);
    if (!link.brandActive || link.status !== 'active') return { kind: 'refused', link };
    const amount = r.amount ?? enteredAmount(link, input.amount);
    const created = await createIntent(tx, keys, Number(r.brand_id), r.mode, {
      amount,
      currency: r.currency,
      reference: r.reference,
      successUrl: r.success_url,
      cancelUrl: r.cancel_url,
    }, { publicBaseUrl: opts.publicBaseUrl });
    await tx.execute('UPDATE payment_intents SET payment_link_id = ? WHERE uuid = ?', [r.id, created.payment_id]);
    await tx.execute('UPDATE payment_links SET payments_created = payments_created + 1, updated_at = now() WHERE id = ?', [r.id]);
    return { kind: 'created', paymentId: created.payment_id };
  });
}
