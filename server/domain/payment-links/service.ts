import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { PaymentLinkResource } from '../../../contract/merchant/payment-links.ts';
import { intentRefusal, quoteGatewaysOf } from '../gateways/quote.ts';
import { listGateways } from '../gateways/service.ts';
import { compareMoney } from '../money/decimal.ts';
import { type Db } from '../db.ts';
import { gatewaysOfMode } from '../sandbox/gateway.ts';

/**
 * Payment links: a brand's shareable URL (and QR code) that creates a payment
 * intent per visit (visit.ts) and continues on the normal checkout. Scoped by
 * brand and mode like every merchant object: another brand's or mode's link is
 * PAYMENT_LINK_NOT_FOUND.
 */

export interface CreatePaymentLinkInput {
  amount?: string;
  min_amount?: string;
  max_amount?: string;
  currency: string;
  single_use?: boolean;
  expires_at?: string;
  reference?: string;
  description?: string;
  success_url?: string;
  cancel_url?: string;
}

/**
 * The link (`l`) with its status inputs; add a where on `l`. A single-use link
 * is used while a payment it created is paid or can still be paid (pending
 * and not expired); a payment that expired unpaid frees it.
 */
export function linkQuery(em: Db) {
  return em
    .selectFrom('payment_links as l')
    .select([
      'l.id', 'l.public_id', 'l.brand_id', 'l.mode', 'l.amount', 'l.min_amount', 'l.max_amount', 'l.currency', 'l.single_use', 'l.expires_at', 'l.reference',
      'l.description', 'l.success_url', 'l.cancel_url', 'l.active', 'l.payments_created', 'l.created_at',
    ])
    .select((eb) => [
      sql<boolean>`(l.expires_at IS NOT NULL AND l.expires_at <= now())`.as('past_expiry'),
      eb
        .and([
          eb.ref('l.single_use'),
          eb.exists(
            eb
              .selectFrom('payment_intents as pi')
              .select(sql`1`.as('one'))
              .whereRef('pi.payment_link_id', '=', 'l.id')
              .where((w) => w.or([w('pi.status', '=', 'completed'), w.and([w('pi.status', '=', 'pending'), w('pi.expires_at', '>', sql<Date>`now()`)])])),
          ),
        ])
        .as('used'),
    ]);
}

export type PaymentLinkRow = Awaited<ReturnType<ReturnType<typeof linkQuery>['executeTakeFirstOrThrow']>>;

export type LinkStatus = PaymentLinkResource['status'];

export function linkStatus(r: Pick<PaymentLinkRow, 'active' | 'past_expiry' | 'used'>): LinkStatus {
  if (!r.active) return 'inactive';
  if (r.past_expiry) return 'expired';
  if (r.used) return 'used';
  return 'active';
}

export function paymentLinkUrls(publicBaseUrl: string, publicId: string) {
  const url = `${publicBaseUrl.replace(/\/+$/, '')}/pay/${publicId}`;
  return { url, qr_svg_url: `${url}/qr.svg`, qr_png_url: `${url}/qr.png` };
}

function toPaymentLinkResource(r: PaymentLinkRow, publicBaseUrl: string): PaymentLinkResource {
  return {
    id: r.public_id,
    ...paymentLinkUrls(publicBaseUrl, r.public_id),
    amount: r.amount,
    min_amount: r.min_amount,
    max_amount: r.max_amount,
    currency: r.currency,
    single_use: r.single_use,
    expires_at: r.expires_at?.toISOString() ?? null,
    reference: r.reference,
    description: r.description,
    success_url: r.success_url,
    cancel_url: r.cancel_url,
    active: r.active,
    status: linkStatus(r),
    payments_created: r.payments_created,
    created_at: r.created_at.toISOString(),
    livemode: r.mode === 'live',
  };
}

/** 96 random bits: the id in the public URL is the link's only credential. */
function newPaymentLinkId(): string {
  return `plink_${randomBytes(12).toString('hex')}`;
}

const LINK_ID_RE = /^plink_[0-9a-f]{24}$/;
export const isPaymentLinkId = (s: string): boolean => LINK_ID_RE.test(s);

/** Every rule is checked before the one write, so a refused create leaves nothing behind. */
async function checkInput(em: Db, mode: Mode, input: CreatePaymentLinkInput): Promise<void> {
  if (input.amount !== undefined && (input.min_amount !== undefined || input.max_amount !== undefined)) {
    const field = input.min_amount !== undefined ? 'min_amount' : 'max_amount';
    throw new AppError('VALIDATION_ERROR', 'A fixed amount takes no min_amount or max_amount (leave amount out for a customer-entered amount)', { field });
  }
  if (input.min_amount !== undefined && input.max_amount !== undefined && compareMoney(input.max_amount, input.min_amount) < 0) {
    throw new AppError('VALIDATION_ERROR', 'max_amount must not be below min_amount', { field: 'max_amount' });
  }
  if (input.expires_at !== undefined && new Date(input.expires_at).getTime() <= Date.now()) {
    throw new AppError('VALIDATION_ERROR', 'Must be in the future', { field: 'expires_at' });
  }
  const gateways = gatewaysOfMode(await listGateways(em, { enabledOnly: true }), mode);
  const probe = input.amount ?? input.min_amount ?? input.max_amount ?? '1.00';
  const refusal = intentRefusal(await quoteGatewaysOf(em, gateways, probe, input.currency));
  if (refusal === 'CURRENCY_CONVERSION_FAILED') {
    throw new AppError('CURRENCY_NOT_SUPPORTED', `No gateway takes ${input.currency} and no exchange rate converts it`, { field: 'currency' });
  }
  if (refusal && input.amount !== undefined) throw new AppError(refusal, undefined, { field: 'amount' });
}

export async function createPaymentLink(em: Db, brandId: number, mode: Mode, input: CreatePaymentLinkInput, publicBaseUrl: string): Promise<PaymentLinkResource> {
  await checkInput(em, mode, input);
  const created = await em
    .insertInto('payment_links')
    .values({
      public_id: newPaymentLinkId(), brand_id: brandId, mode, amount: input.amount ?? null, min_amount: input.min_amount ?? null,
      max_amount: input.max_amount ?? null, currency: input.currency, single_use: input.single_use ?? false,
      // As given (PostgreSQL reads the ISO text, sub-millisecond digits included).
      expires_at: input.expires_at === undefined ? null : sql<Date>`${input.expires_at}::timestamptz`, reference: input.reference ?? null,
      description: input.description ?? null, success_url: input.success_url ?? null, cancel_url: input.cancel_url ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return toPaymentLinkResource(await linkQuery(em).where('l.id', '=', created.id).executeTakeFirstOrThrow(), publicBaseUrl);
}

export async function getPaymentLink(em: Db, brandId: number, mode: Mode, publicId: string, publicBaseUrl: string): Promise<PaymentLinkResource> {
  if (!isPaymentLinkId(publicId)) throw new AppError('PAYMENT_LINK_NOT_FOUND');
  const row = await linkQuery(em).where('l.public_id', '=', publicId).where('l.brand_id', '=', brandId).where('l.mode', '=', mode).executeTakeFirst();
  if (!row) throw new AppError('PAYMENT_LINK_NOT_FOUND');
  return toPaymentLinkResource(row, publicBaseUrl);
}

export async function listPaymentLinks(
  em: Db,
  brandId: number,
  mode: Mode,
  page: { page: number; per_page: number },
  publicBaseUrl: string,
): Promise<{ items: PaymentLinkResource[]; total: number }> {
  const ofMode = (q: ReturnType<typeof linkQuery>) => q.where('l.brand_id', '=', brandId).where('l.mode', '=', mode);
  const rows = await ofMode(linkQuery(em))
    .select(sql<string>`count(*) OVER ()`.as('total'))
    .orderBy('l.id', 'desc')
    .limit(page.per_page)
    .offset((page.page - 1) * page.per_page)
    .execute();
  let total = rows[0] ? Number(rows[0].total) : 0;
  if (!rows[0] && page.page > 1) {
    const c = await ofMode(linkQuery(em)).clearSelect().select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    total = Number(c.n);
  }
  return { items: rows.map((r) => toPaymentLinkResource(r, publicBaseUrl)), total };
}

/** The link stops creating payments; the payments it created stay as they are. Idempotent. */
export async function deactivatePaymentLink(em: Db, brandId: number, mode: Mode, publicId: string, publicBaseUrl: string): Promise<PaymentLinkResource> {
  if (!isPaymentLinkId(publicId)) throw new AppError('PAYMENT_LINK_NOT_FOUND');
  await em
    .updateTable('payment_links')
    .set({ active: false, updated_at: sql<Date>`now()` })
    .where('public_id', '=', publicId)
    .where('brand_id', '=', brandId)
    .where('mode', '=', mode)
    .where('active', '=', true)
    .execute();
  return getPaymentLink(em, brandId, mode, publicId, publicBaseUrl);
}
