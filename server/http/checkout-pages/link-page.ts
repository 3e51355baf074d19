import type { PublicLink } from '../../domain/payment-links/visit.ts';
import { formatAmount, initialOf } from './format.ts';
import { html } from './html.ts';
import { layout, messagePage } from './layout.ts';

/**
 * The payment link's page. Visiting it (GET) creates nothing: link previews and
 * crawlers must not use up a single-use link. The customer's button (POST, no
 * script needed) creates the payment and goes on to the normal checkout.
 */
export function renderLinkPage(link: PublicLink, opts: { error?: string; amount?: string } = {}): string {
  const fixed = link.amount !== null;
  const bounds = [link.minAmount ? `at least ${formatAmount(link.minAmount)}` : null, link.maxAmount ? `at most ${formatAmount(link.maxAmount)}` : null]
    .filter(Boolean)
    .join(', ');
  const body = html`<main class="sheet" id="payment-link">
  <header class="merchant">
    <div class="badge" aria-hidden="true">${initialOf(link.brandName)}</div>
    <div class="merchant-text">
      <p class="eyebrow">Pay to</p>
      <h1 class="brand">${link.brandName}</h1>
      ${link.description ? html`<p class="reference">${link.description}</p>` : null}
    </div>
  </header>
  <form class="pay-form link-form" method="post" action="/pay/${link.publicId}">
    ${fixed
      ? html`<section class="due" aria-label="Amount due">
      <p class="label">Amount due</p>
      <p class="amount"><span class="amount-value">${formatAmount(link.amount!)}</span> <span class="amount-currency">${link.currency}</span></p>
    </section>`
      : html`<label for="link-amount">Amount (${link.currency})${bounds ? html` <span class="optional">${bounds}</span>` : null}</label>
    <input id="link-amount" name="amount" inputmode="decimal" autocomplete="off" required maxlength="20" value="${opts.amount ?? ''}" placeholder="e.g. 500">`}
    ${opts.error ? html`<p class="form-error" role="alert">${opts.error}</p>` : null}
    <button type="submit" class="button primary">Continue to payment</button>
  </form>
  <footer class="foot"><p class="fine secure">Secure checkout</p></footer>
</main>`;
  return layout({ title: `Pay ${link.brandName}`, body });
}

/** A link that takes no more payments, and why, in words the customer can act on. */
export function linkUnavailablePage(link: PublicLink): string {
  const text = {
    expired: 'This payment link has expired.',
    inactive: 'This payment link is no longer active.',
    used: 'This payment link has already been used.',
    active: 'This payment link cannot take payments right now.',
  }[link.status];
  return messagePage({ title: 'Payment link unavailable', heading: text, text: `Ask ${link.brandName} for a new payment link.` });
}
