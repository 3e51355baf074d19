import { randomBytes } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { PaymentLinkResource } from '../../../contract/merchant/payment-links.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { intentRefusal, quoteGatewaysOf } from '../gateways/quote.ts';
import { listGateways } from '../gateways/service.ts';
import { compareMoney } from '../money/decimal.ts';
import { pgDate, pgDateOrNull } from '../../infra/database/pg-date.ts';
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

export interface PaymentLinkRow {
  id: string;
  public_id: string;
  brand_id: string;
  mode: Mode;
  amount: string | null;
  min_amount: string | null;
  max_amount: string | null;
  currency: string;
  single_use: boolean;
  expires_at: string | Date | null;
  reference: string | null;
  description: string | null;
  success_url: string | null;
  cancel_url: string | null;
  active: boolean;
  payments_created: number;
  created_at: string | Date;
  past_expiry: boolean;
  used: boolean;
}

/**
 * A single-use link is used while a payment it created is paid or can still be
 * paid (pending and not expired); a payment that expired unpaid frees it.
 */
const LINK_USED_SQL = `EXISTS (SELECT 1 FROM payment_intents pi WHERE pi.payment_link_id = l.id
  AND (pi.status = 'completed' OR (pi.status = 'pending' AND pi.expires_at > now())))`;

export const LINK_COLUMNS = `l.id, l.public_id, l.brand_id, l.mode, l.amount::text AS amount, l.min_amount::text AS min_amount, l.max_amount::text AS max_amount,
  l.currency, l.single_use, l.expires_at, l.reference, l.description, l.success_url, l.cancel_url, l.active, l.payments_created, l.created_at,
  (l.expires_at IS NOT NULL AND l.expires_at <= now()) AS past_expiry, (l.single_use AND ${LINK_USED_SQL}) AS used`;

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
    expires_at: pgDateOrNull(r.expires_at)?.toISOString() ?? null,
    reference: r.reference,
    description: r.description,
    success_url: r.success_url,
    cancel_url: r.cancel_url,
    active: r.active,
    status: linkStatus(r),
    payments_created: r.payments_created,
    created_at: pgDate(r.created_at).toISOString(),
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
async function checkInput(em: EntityManager, mode: Mode, input: CreatePaymentLinkInput): Promise<void> {
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

export async function createPaymentLink(em: EntityManager, brandId: number, mode: Mode, input: CreatePaymentLinkInput, publicBaseUrl: string): Promise<PaymentLinkResource> {
  await checkInput(em, mode, input);
  const rows = await em.execute<Array<{ id: string }>>(
    `INSERT INTO payment_links (public_id, brand_id, mode, amount, min_amount, max_amount, currency, single_use, expires_at, reference, description, success_url, cancel_url)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [
      newPaymentLinkId(), brandId, mode, input.amount ?? null, input.min_amount ?? null, input.max_amount ?? null, input.currency,
      input.single_use ?? false, input.expires_at ?? null, input.reference ?? null, input.description ?? null, input.success_url ?? null, input.cancel_url ?? null,
    ],
  );
  const [row] = await em.execute<PaymentLinkRow[]>(`SELECT ${LINK_COLUMNS} FROM payment_links l WHERE l.id = ?`, [rows[0]!.id]);
  return toPaymentLinkResource(row!, publicBaseUrl);
}

export async function getPaymentLink(em: EntityManager, brandId: number, mode: Mode, publicId: string, publicBaseUrl: string): Promise<PaymentLinkResource> {
  if (!isPaymentLinkId(publicId)) throw new AppError('PAYMENT_LINK_NOT_FOUND');
  const [row] = await em.execute<PaymentLinkRow[]>(`SELECT ${LINK_COLUMNS} FROM payment_links l WHERE l.public_id = ? AND l.brand_id = ? AND l.mode = ?`, [
    publicId, brandId, mode,
  ]);
  if (!row) throw new AppError('PAYMENT_LINK_NOT_FOUND');
  return toPaymentLinkResource(row, publicBaseUrl);
}

export async function listPaymentLinks(
  em: EntityManager,
  brandId: number,
  mode: Mode,
  page: { page: number; per_page: number },
  publicBaseUrl: string,
): Promise<{ items: PaymentLinkResource[]; total: number }> {
  const rows = await em.execute<Array<PaymentLinkRow & { total: string }>>(
    `SELECT ${LINK_COLUMNS}, count(*) OVER () AS total FROM payment_links l WHERE l.brand_id = ? AND l.mode = ? ORDER BY l.id DESC LIMIT ? OFFSET ?`,
    [brandId, mode, page.per_page, (page.page - 1) * page.per_page],
  );
  let total = rows[0] ? Number(rows[0].total) : 0;
  if (!rows[0] && page.page > 1) {
    const [c] = await em.execute<Array<{ n: string }>>('SELECT count(*) AS n FROM payment_links WHERE brand_id = ? AND mode = ?', [brandId, mode]);
    total = Number(c!.n);
  }
  return { items: rows.map((r) => toPaymentLinkResource(r, publicBaseUrl)), total };
}

/** The link stops creating payments; the payments it created stay as they are. Idempotent. */
export async function deactivatePaymentLink(em: EntityManager, brandId: number, mode: Mode, publicId: string, publicBaseUrl: string): Promise<PaymentLinkResource> {
  if (!isPaymentLinkId(publicId)) throw new AppError('PAYMENT_LINK_NOT_FOUND');
  await em.execute('UPDATE payment_links SET active = false, updated_at = now() WHERE public_id = ? AND brand_id = ? AND mode = ? AND active', [publicId, brandId, mode]);
  return getPaymentLink(em, brandId, mode, publicId, publicBaseUrl);
}
