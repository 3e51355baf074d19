import { AppError } from '../../../contract/common/errors.ts';
import type { CheckoutGateway, CheckoutPayment, CheckoutTransaction } from '../../../contract/checkout/payments.ts';
import { type Db } from '../db.ts';
import { intentRefusal, quoteGateways, type GatewayQuote } from '../gateways/quote.ts';
import { subMoney } from '../money/decimal.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import { gatewayServesMode, isSandboxDriven } from '../sandbox/gateway.ts';
import { sandboxPayUrl } from '../sandbox/sessions.ts';
import { successRedirectUrl } from '../payments/redirect.ts';
import { MAX_SUBMISSION_REPLACEMENTS, MAX_TAKEN_ANSWERS } from './limits.ts';
import { checkoutState } from './state.ts';
import { phoneCheckOf } from '../recovery/backfill.ts';
import { selectCheckout, type CheckoutRow } from './queries.ts';
import { payInto, type PayInto } from '../wallet-accounts/service.ts';
import { buttonColors, DEFAULT_PRIMARY, selectPageBrand } from '../brands/look.ts';

/** What the checkout needs besides the database: where links point, and the sandbox's secret for its page URLs. */
export interface CheckoutLinks {
  publicBaseUrl: string;
  sandboxSecret: string;
}

export interface CheckoutPage {
  view: CheckoutPayment;
  /** The merchant's cancel URL (the expired page links back with it). */
  cancelUrl: string | null;
  intentId: number;
  /** The brand's IANA time zone: the page shows the deadline in it. */
  timeZone: string;
}

type Row = CheckoutRow;

/** `into`: where a manual gateway's customer pays (wallet-accounts/service.ts payInto). */
function toGateway(q: GatewayQuote, into: PayInto | undefined): CheckoutGateway {
  const g = q.gateway;
  const account = into?.kind === 'account' ? into.account : null;
  return {
    code: g.code,
    name: g.name,
    type: g.type,
    methods: g.methods,
    amount: q.amount!,
    currency: q.currency,
    // The merchant's fee is the merchant's business: the customer sees only what they pay.
    fee: q.gateway.feePayer === 'customer' ? q.fee! : '0.00',
    amount_to_send: q.toSend!,
    converted: q.converted,
    exchange_rate: q.exchangeRate,
    min_amount: g.minAmount,
    max_amount: g.maxAmount,
    receiving_account: g.type !== 'manual' ? null : account ? account.number : g.receivingAccount,
    receiving_account_type: account ? account.accountType : null,
    instructions: g.type === 'manual' ? g.instructions : null,
  };
}

function toTransaction(r: Row, links: CheckoutLinks, phoneCheckUntil: Date | null): CheckoutTransaction | null {
  if (r.trx_id === null) return null;
  const type = r.gateway_type!;
  const redirect = r.status === 'processing' && isSandboxDriven({ type }) ? sandboxPayUrl(links.publicBaseUrl, links.sandboxSecret, r.trx_id) : null;
  return {
    trx_id: r.trx_id,
    gateway: r.gateway_code!,
    gateway_name: r.gateway_name!,
    gateway_type: type,
    method: r.method!,
    status: r.status!,
    amount: r.t_amount!,
    currency: r.t_currency!,
    fee: subMoney(r.sms_amount!, r.t_amount!),
    amount_to_send: r.sms_amount!,
    gateway_trx_id: r.gateway_trx_id,
    failure_reason: r.failure_reason,
    created_at: r.created_at!.toISOString(),
    completed_at: r.completed_at?.toISOString() ?? null,
    redirect_url: redirect,
    gateway_trx_id_changes_left: changesLeft(r),
    phone_check_until: phoneCheckUntil?.toISOString() ?? null,
  };
}

/**
 * A manual submission no SMS proved yet, while its merchant's phone is being
 * asked (pull-on-submit, docs/recovery.md): until when the page says so.
 */
async function phoneCheckFor(em: Db, r: Row): Promise<Date | null> {
  if (r.status !== 'awaiting_verification' || r.gateway_type !== 'manual' || r.past_expiry || r.created_at === null) return null;
  return phoneCheckOf(em, { brandId: r.brand_id, mode: r.mode, paymentCreatedAt: r.intent_created_at, submittedAt: r.created_at });
}

/** Pure: why no gateway can take the payment, in words for the customer. */
function notPayableReasonOf(quotes: readonly GatewayQuote[], currency: string): string {
  const refusal = intentRefusal(quotes);
  if (refusal === 'CURRENCY_CONVERSION_FAILED') return `No payment method here takes ${currency}.`;
  if (refusal === 'AMOUNT_EXCEEDS_MAXIMUM') return 'The amount is above what every payment method here takes.';
  if (refusal === 'AMOUNT_BELOW_MINIMUM') return 'The amount is below what every payment method here takes.';
  return 'No payment method is available right now.';
}

/** Replacing the submitted id (replace.ts) is offered while it could succeed: an open manual submission, before expiry, within the bounds. */
function changesLeft(r: Row): number | null {
  if (r.status !== 'awaiting_verification' || r.gateway_type !== 'manual' || r.past_expiry || r.intent_status !== 'pending') return null;
  if ((r.taken_answers ?? 0) >= MAX_TAKEN_ANSWERS) return 0;
  return Math.max(0, MAX_SUBMISSION_REPLACEMENTS - (r.replacements ?? 0));
}

/**
 * The payment as its checkout page shows it. The payment id is the only
 * credential, so an unknown and a malformed id answer the same PAYMENT_NOT_FOUND.
 * A disabled brand's payment is BRAND_DISABLED: its checkout shows nothing to pay.
 * Only gateways that can take the payment right now are listed (enabled, the
 * currency convertible, the converted amount within their limits).
 */
export async function loadCheckout(em: Db, paymentId: string, links: CheckoutLinks): Promise<CheckoutPage> {
  if (!isUuid(paymentId)) throw new AppError('PAYMENT_NOT_FOUND');
  const r = await selectCheckout(em, paymentId.toLowerCase());
  if (!r) throw new AppError('PAYMENT_NOT_FOUND');
  if (r.brand_status !== 'active') throw new AppError('BRAND_DISABLED');
  const { status, payable } = checkoutState({ intentStatus: r.intent_status, pastExpiry: r.past_expiry, transactionStatus: r.status });
  // A live payment is never offered the sandbox (startTransaction refuses it too).
  const quotes = payable ? (await quoteGateways(em, r.amount, r.currency)).filter((q) => gatewayServesMode(q.gateway, r.mode)) : [];
  const quoted = quotes.filter((q) => q.refusal === null);
  // The brand's own account on each manual gateway, chosen once per payment; a gateway where the brand has accounts
  // but none can take this payment now (all disabled or full) is not offered.
  const manual = quoted.filter((q) => q.gateway.type === 'manual');
  const into = manual.length === 0
    ? new Map<number, PayInto>()
    : await payInto(em, { brandId: r.brand_id, intentId: r.intent_id, gateways: manual.map((q) => ({ id: q.gateway.id, amountToSend: q.toSend! })) });
  const gateways = quoted.filter((q) => into.get(q.gateway.id)?.kind !== 'none').map((q) => toGateway(q, into.get(q.gateway.id)));
  // No gateway can take it: not payable (no buttons), with the reason, rather than an open page nobody can pay.
  const notPayableReason = payable && gateways.length === 0 ? notPayableReasonOf(quotes, r.currency) : null;
  const brand = await selectPageBrand(em, r.brand_id);
  const view: CheckoutPayment = {
    payment_id: r.payment_id,
    brand: {
      name: brand.name,
      logo_url: brand.logoUrl,
      primary_color: brand.primaryColor,
      button_text_color: buttonColors(brand.primaryColor ?? DEFAULT_PRIMARY).ink,
      support_phone: brand.supportPhone,
      support_email: brand.supportEmail,
    },
    amount: r.amount,
    currency: r.currency,
    reference: r.reference,
    status,
    payable: payable && notPayableReason === null,
    expires_at: r.expires_at.toISOString(),
    gateways,
    transaction: toTransaction(r, links, await phoneCheckFor(em, r)),
    redirect_url: status === 'completed' && r.success_url ? successRedirectUrl(r.success_url, r.payment_id) : null,
    not_payable_reason: notPayableReason,
  };
  return { view, cancelUrl: r.cancel_url, intentId: r.intent_id, timeZone: r.brand_timezone };
}

/**
 * The customer leaves for the merchant's cancel URL. Nothing changes (like a
 * hosted checkout session, the payment stays open until it expires); only a
 * completed payment cannot be cancelled any more.
 */
export async function cancelCheckout(em: Db, paymentId: string, links: CheckoutLinks): Promise<{ cancelUrl: string | null }> {
  const { view, cancelUrl } = await loadCheckout(em, paymentId, links);
  if (view.status === 'completed') throw new AppError('PAYMENT_ALREADY_STARTED', 'Payment is already completed');
  return { cancelUrl };
}
