import { initialOf } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { t, tHtml, type Lang } from './i18n.ts';

/** What the customer pages show of the brand (the checkout API's `brand`, or the payment link's). */
export interface BrandLook {
  name: string;
  logo_url: string | null;
  support_phone: string | null;
  support_email: string | null;
}

/** The brand's logo, or its initial in a badge when it has none. */
export function merchantHeader(lang: Lang, brand: BrandLook, eyebrow: string, extra: SafeHtml | null): SafeHtml {
  return html`<header class="merchant">
    ${brand.logo_url
      ? html`<img class="brand-logo" src="${brand.logo_url}" alt="${t(lang, 'logo_alt', { brand: brand.name })}" width="48" height="48">`
      : html`<div class="badge" aria-hidden="true">${initialOf(brand.name)}</div>`}
    <div class="merchant-text">
      <p class="eyebrow">${eyebrow}</p>
      <h1 class="brand">${brand.name}</h1>
      ${extra}
    </div>
  </header>`;
}

/** The merchant's support contact, when it gave one: a tel: and a mailto: link. */
export function supportContact(lang: Lang, brand: BrandLook): SafeHtml | null {
  if (!brand.support_phone && !brand.support_email) return null;
  const tel = brand.support_phone ? brand.support_phone.replace(/[^0-9+]/g, '') : null;
  return html`<p class="fine support">${tHtml(lang, 'support', { brand: brand.name })}
    ${brand.support_phone ? html`<a href="tel:${tel}" class="support-phone">${brand.support_phone}</a>` : null}
    ${brand.support_phone && brand.support_email ? ' · ' : null}
    ${brand.support_email ? html`<a href="mailto:${brand.support_email}" class="support-email">${brand.support_email}</a>` : null}</p>`;
}
