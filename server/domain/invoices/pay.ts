import { AppError } from '../../../contract/common/errors.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { compareMoney, toMoney } from '../money/decimal.ts';
import { createIntent } from '../payments/intents.ts';
import { transaction, type Db } from '../db.ts';
import { linkInvoicePayment, selectInvoiceByToken, selectOpenInvoicePayment, type InvoiceRow } from './queries.ts';
import { invoiceUrls, isInvoiceToken } from './service.ts';
import { amountRemaining, invoiceNumber } from './totals.ts';
import type { InvoiceLanguage, Translate } from './catalog.ts';
import { currencyLabel, formatAmountIn, latinDigits } from '../display.ts';

/** The invoice behind a hosted page's token, or null: unknown, malformed, or a draft (not public until finalized). */
export async function findPublicInvoice(db: Db, token: string, opts: { lock?: boolean } = {}): Promise<InvoiceRow | null> {
  if (!isInvoiceToken(token)) return null;
  const row = await selectInvoiceByToken(db, token, opts);
  return row && row.status !== 'draft' ? row : null;
}

/** Whether the hosted page offers to pay: open or overdue, something left, and the brand takes payments. */
export function isPayable(r: InvoiceRow): boolean {
  return (r.status === 'open' || r.status === 'overdue') && r.brand_status === 'active' && compareMoney(amountRemaining(r.total, r.amount_paid), '0') > 0;
}

const ENTERED_RE = /^\d{1,12}(?:\.\d{1,2})?$/;

/** A part payment the customer typed: digits (Latin or Bangla, `৫০০.৫০`) with up to two decimals, above zero and at most what is left. */
function partAmount(t: Translate, lang: InvoiceLanguage, raw: string, remaining: string, currency: string): string {
  const text = latinDigits(raw.trim()).replace(/,/g, '');
  if (!ENTERED_RE.test(text)) throw new AppError('VALIDATION_ERROR', t('enterAmount'), { field: 'amount' });
  const amount = toMoney(text);
  // The limits as the page writes amounts in Bangla (Bangla digits, ৳); in English as they always were ("4192.52 BDT").
  const limit = (v: string) => ({ amount: lang === 'en' ? v : formatAmountIn(lang, v), currency: currencyLabel(lang, currency) });
  if (compareMoney(amount, '0.01') < 0) throw new AppError('VALIDATION_ERROR', t('atLeast', limit('0.01')), { field: 'amount' });
  if (compareMoney(amount, remaining) > 0) throw new AppError('VALIDATION_ERROR', t('atMost', limit(remaining)), { field: 'amount' });
  return amount;
}

/**
 * The hosted page's Pay: a payment intent for what is left (or the part the
 * customer chose), in the invoice's currency, tied to the invoice and its
 * customer, then the normal checkout. The invoice row is locked for the
 * whole visit; a pending payment of the same amount is continued rather than
 * doubled. Refused with nothing written: a void invoice (INVOICE_VOID), a paid
 * one (INVOICE_ALREADY_PAID), a disabled brand (BRAND_DISABLED).
 */
export async function payInvoice(
  db: Db,
  keys: PersonalDataKeys,
  token: string,
  input: { amount?: string },
  opts: { publicBaseUrl: string; t: Translate; lang: InvoiceLanguage },
): Promise<{ paymentId: string } | null> {
  return transaction(db, async (tx) => {
    const r = await findPublicInvoice(tx, token, { lock: true });
    if (!r) return null;
    if (r.status === 'void') throw new AppError('INVOICE_VOID');
    const remaining = amountRemaining(r.total, r.amount_paid);
    if (r.status === 'paid' || compareMoney(remaining, '0') <= 0) throw new AppError('INVOICE_ALREADY_PAID');
    if (r.brand_status !== 'active') throw new AppError('BRAND_DISABLED');
    const amount = input.amount === undefined || input.amount.trim() === '' ? remaining : partAmount(opts.t, opts.lang, input.amount, remaining, r.currency);
    const open = await selectOpenInvoicePayment(tx, r.id, amount);
    if (open) return { paymentId: open };
    const back = invoiceUrls(opts.publicBaseUrl, r.token).hosted_url;
    const created = await createIntent(tx, keys, r.brand_id, r.mode, {
      amount,
      currency: r.currency,
      reference: invoiceNumber(r.number),
      successUrl: back,
      cancelUrl: back,
    }, { publicBaseUrl: opts.publicBaseUrl });
    await linkInvoicePayment(tx, created.payment_id, r.id, r.customer_id);
    return { paymentId: created.payment_id };
  });
}
