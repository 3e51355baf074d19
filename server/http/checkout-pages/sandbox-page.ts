import type { SandboxSession } from '../../domain/sandbox/sessions.ts';
import { html, type SafeHtml } from './html.ts';
import { currencyLabel, formatAmountIn, t, type Lang } from './i18n.ts';
import { layout } from './layout.ts';

function decision(lang: Lang, s: SandboxSession, token: string): SafeHtml {
  const back = `/checkout/${s.paymentId}`;
  if (s.status === 'approved' || s.status === 'declined') {
    return html`<section class="status ${s.status === 'approved' ? 'done' : 'expired'}">
    <h2 class="status-title">${t(lang, 'sandbox_decided', { decision: t(lang, s.status === 'approved' ? 'sandbox_approved' : 'sandbox_declined') })}</h2>
    <p>${t(lang, 'sandbox_told', { brand: s.brandName })}</p>
    <a class="button secondary" href="${back}">${t(lang, 'sandbox_back')}</a>
  </section>`;
  }
  if (!s.decidable) {
    return html`<section class="status expired">
    <h2 class="status-title">${t(lang, 'sandbox_expired')}</h2>
    <a class="button secondary" href="${back}">${t(lang, 'sandbox_back')}</a>
  </section>`;
  }
  return html`<section class="sandbox-actions">
    <form method="post" action="/sandbox/pay/${token}/approve"><button type="submit" class="button primary" id="approve">${t(lang, 'sandbox_approve')}</button></form>
    <form method="post" action="/sandbox/pay/${token}/decline"><button type="submit" class="button danger" id="decline">${t(lang, 'sandbox_decline')}</button></form>
  </section>`;
}

/**
 * The sandbox gateway's own payment page: what a real redirect gateway would
 * show, with the two outcomes a test needs. Plain forms, no script. The
 * sandbox is not the merchant, so it carries no brand look.
 */
export function renderSandboxPage(lang: Lang, s: SandboxSession, token: string): string {
  const body = html`<main class="sheet sandbox">
  <p class="sandbox-banner">${t(lang, 'sandbox_banner')}</p>
  <header class="merchant">
    <div class="badge sandbox-badge" aria-hidden="true">S</div>
    <div class="merchant-text">
      <p class="eyebrow">${s.gatewayName}</p>
      <h1 class="brand">${s.brandName}</h1>
      <p class="reference">${t(lang, 'reference')} <span class="mono">${s.trxId}</span></p>
    </div>
  </header>
  <section class="due" aria-label="${t(lang, 'amount')}">
    <p class="label">${t(lang, 'amount')}</p>
    <p class="amount"><span class="amount-value">${formatAmountIn(lang, s.amount)}</span> <span class="amount-currency">${currencyLabel(lang, s.currency)}</span></p>
  </section>
  ${decision(lang, s, token)}
</main>`;
  return layout({ lang, title: t(lang, 'sandbox_title', { gateway: s.gatewayName, brand: s.brandName }), body, path: `/sandbox/pay/${token}` });
}
