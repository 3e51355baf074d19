import { randomBytes } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { PaymentLinkResource } from '../../../contract/merchant/payment-links.ts';
import { intentRefusal, quoteGatewaysOf } from '../gateways/quote.ts';
import { listGateways } from '../gateways/service.ts';
import { compareMoney } from '../money/decimal.ts';
import { type Db } from '../db.ts';
import { gatewaysOfMode } from '../sandbox/gateway.ts';
import { deactivateLink, insertLink, selectLink, selectLinkById, selectLinkPage, type PaymentLinkRow } from './queries.ts';

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

export type { PaymentLinkRow };

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
  const id = await insertLink(em, {
    public_id: newPaymentLinkId(), brand_id: brandId, mode, amount: input.amount ?? null, min_amount: input.min_amount ?? null,
    max_amount: input.max_amount ?? null, currency: input.currency, single_use: input.single_use ?? false,
    expires_at: input.expires_at ?? null, reference: input.reference ?? null,
    description: input.description ?? null, success_url: input.success_url ?? null, cancel_url: input.cancel_url ?? null,
  });
  return toPaymentLinkResource(await selectLinkById(em, id), publicBaseUrl);
}

export async function getPaymentLink(em: Db, brandId: number, mode: Mode, publicId: string, publicBaseUrl: string): Promise<PaymentLinkResource> {
  if (!isPaymentLinkId(publicId)) throw new AppError('PAYMENT_LINK_NOT_FOUND');
  const row = await selectLink(em, brandId, mode, publicId);
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
  const { rows, total } = await selectLinkPage(em, brandId, mode, { limit: page.per_page, offset: (page.page - 1) * page.per_page });
  return { items: rows.map((r) => toPaymentLinkResource(r, publicBaseUrl)), total };
}

/** The link stops creating payments; the payments it created stay as they are. Idempotent. */
export async function deactivatePaymentLink(em: Db, brandId: number, mode: Mode, publicId: string, publicBaseUrl: string): Promise<PaymentLinkResource> {
  if (!isPaymentLinkId(publicId)) throw new AppError('PAYMENT_LINK_NOT_FOUND');
  await deactivateLink(em, brandId, mode, publicId);
  return getPaymentLink(em, brandId, mode, publicId, publicBaseUrl);
}
