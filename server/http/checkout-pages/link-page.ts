import type { PublicLink } from '../../domain/payment-links/visit.ts';
import type { PageBrand } from '../../domain/brands/look.ts';
import { merchantHeader, supportContact, type BrandLook } from './brand-parts.ts';
import { html } from './html.ts';
import { currencyLabel, formatAmountIn, formatMoney, t, type Lang } from './i18n.ts';
import { layout, messagePage } from './layout.ts';

export const brandLookOf = (b: PageBrand): BrandLook => ({ name: b.name, logo_url: b.logoUrl, support_phone: b.supportPhone, support_email: b.supportEmail });

/**
 * The payment link's page. Visiting it (GET) creates nothing: link previews and
 * crawlers must not use up a single-use link. The customer's button (POST, no
 * script needed) creates the payment and goes on to the normal checkout.
 */
export function renderLinkPage(link: PublicLink, brand: PageBrand, opts: { lang: Lang; error?: string; amount?: string }): string {
  const { lang } = opts;
  const look = brandLookOf(brand);
  const fixed = link.amount !== null;
  const bounds = [
    link.minAmount ? t(lang, 'link_at_least', { amount: formatMoney(lang, link.minAmount, link.currency) }) : null,
    link.maxAmount ? t(lang, 'link_at_most', { amount: formatMoney(lang, link.maxAmount, link.currency) }) : null,
  ]
    .filter(Boolean)
    .join(', ');
  const body = html`<main class="sheet" id="payment-link">
  ${merchantHeader(lang, look, t(lang, 'pay_to'), link.description ? html`<p class="reference">${link.description}</p>` : null)}
  <form class="pay-form link-form" method="post" action="/pay/${link.publicId}">
    ${fixed
      ? html`<section class="due" aria-label="${t(lang, 'amount_due')}">
      <p class="label">${t(lang, 'amount_due')}</p>
      <p class="amount"><span class="amount-value">${formatAmountIn(lang, link.amount!)}</span> <span class="amount-currency">${currencyLabel(lang, link.currency)}</span></p>
    </section>`
      : html`<label for="link-amount">${t(lang, 'link_amount_label', { currency: link.currency })}${bounds ? html` <span class="optional">${bounds}</span>` : null}</label>
    <input id="link-amount" name="amount" inputmode="decimal" autocomplete="off" required maxlength="20" value="${opts.amount ?? ''}" placeholder="${t(lang, 'link_placeholder')}">`}
    ${opts.error ? html`<p class="form-error" role="alert">${opts.error}</p>` : null}
    <button type="submit" class="button primary">${t(lang, 'link_continue')}</button>
  </form>
  <footer class="foot">${supportContact(lang, look)}<p class="fine secure">${t(lang, 'secure_checkout')}</p></footer>
</main>`;
  return layout({ lang, title: t(lang, 'page_title_pay', { brand: link.brandName }), body, primaryColor: brand.primaryColor, path: opts.error ? null : `/pay/${link.publicId}` });
}

/** A link that takes no more payments, and why, in words the customer can act on. */
export function linkUnavailablePage(lang: Lang, link: PublicLink): string {
  const key = ({ expired: 'link_expired', inactive: 'link_inactive', used: 'link_used', active: 'link_unavailable' } as const)[link.status];
  return messagePage({ lang, title: t(lang, 'link_unavailable_title'), heading: t(lang, key), text: t(lang, 'link_ask_new', { brand: link.brandName }), path: `/pay/${link.publicId}` });
}
