/** The placeholder a merchant may put in `success_url` for the payment id (like Stripe's `{CHECKOUT_SESSION_ID}`). */
const PAYMENT_ID_PLACEHOLDER = '{PAYMENT_ID}';

/**
 * Pure: the success URL the customer is sent to, carrying the payment id so the
 * merchant's page can look the payment up. Every `{PAYMENT_ID}` placeholder is
 * replaced by the id; without one, `payment_id=<id>` is appended to the query
 * (an existing `payment_id` parameter is replaced, never duplicated), before any
 * `#fragment`. The id is a UUID, so it needs no escaping.
 */
export function successRedirectUrl(successUrl: string, paymentId: string): string {
  if (successUrl.includes(PAYMENT_ID_PLACEHOLDER)) return successUrl.replaceAll(PAYMENT_ID_PLACEHOLDER, paymentId);
  // URL-encoded placeholder (`%7BPAYMENT_ID%7D`): a URL normaliser on the merchant's side may have escaped the braces.
  if (/%7BPAYMENT_ID%7D/i.test(successUrl)) return successUrl.replace(/%7BPAYMENT_ID%7D/gi, paymentId);
  // By hand rather than through URLSearchParams, which would re-encode the merchant's other parameters.
  const hash = successUrl.indexOf('#');
  const fragment = hash === -1 ? '' : successUrl.slice(hash);
  const base = (hash === -1 ? successUrl : successUrl.slice(0, hash)).replace(/([?&])payment_id=[^&]*(&|$)/g, (_m, lead: string, tail: string) => (tail ? lead : ''));
  const joiner = !base.includes('?') ? '?' : /[?&]$/.test(base) ? '' : '&';
  return `${base}${joiner}payment_id=${paymentId}${fragment}`;
}

/**
 * Pure: `url` with `name=value` in its query (an existing `name` replaced),
 * before any `#fragment`; the merchant's other parameters are kept as written.
 * `value` must need no escaping.
 */
export function withQueryParam(url: string, name: string, value: string): string {
  const hash = url.indexOf('#');
  const fragment = hash === -1 ? '' : url.slice(hash);
  const re = new RegExp(`([?&])${name}=[^&]*(&|$)`, 'g');
  const base = (hash === -1 ? url : url.slice(0, hash)).replace(re, (_m, lead: string, tail: string) => (tail ? lead : ''));
  const joiner = !base.includes('?') ? '?' : /[?&]$/.test(base) ? '' : '&';
  return `${base}${joiner}${name}=${value}${fragment}`;
}
