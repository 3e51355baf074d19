import type { SandboxSession } from '../../domain/sandbox/sessions.ts';
import { formatAmount } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { layout } from './layout.ts';

function decision(s: SandboxSession, token: string): SafeHtml {
  const back = `/checkout/${s.paymentId}`;
  if (s.status === 'approved' || s.status === 'declined') {
    return html`<section class="status ${s.status === 'approved' ? 'done' : 'expired'}">
    <h2 class="status-title">Payment ${s.status}</h2>
    <p>The sandbox has told ${s.brandName} about it.</p>
    <a class="button secondary" href="${back}">Back to the checkout</a>
  </section>`;
  }
  if (!s.decidable) {
    return html`<section class="status expired">
    <h2 class="status-title">This payment session has expired</h2>
    <a class="button secondary" href="${back}">Back to the checkout</a>
  </section>`;
  }
  return html`<section class="sandbox-actions">
    <form method="post" action="/sandbox/pay/${token}/approve"><button type="submit" class="button primary" id="approve">Approve payment</button></form>
    <form method="post" action="/sandbox/pay/${token}/decline"><button type="submit" class="button danger" id="decline">Decline</button></form>
  </section>`;
}

/**
 * The sandbox gateway's own payment page: what a real redirect gateway would
 * show, with the two outcomes a test needs. Plain forms, no script.
 */
export function renderSandboxPage(s: SandboxSession, token: string): string {
  const body = html`<main class="sheet sandbox">
  <p class="sandbox-banner">Sandbox: test payment, no real money moves</p>
  <header class="merchant">
    <div class="badge sandbox-badge" aria-hidden="true">S</div>
    <div class="merchant-text">
      <p class="eyebrow">${s.gatewayName}</p>
      <h1 class="brand">${s.brandName}</h1>
      <p class="reference">Reference <span class="mono">${s.trxId}</span></p>
    </div>
  </header>
  <section class="due" aria-label="Amount">
    <p class="label">Amount</p>
    <p class="amount"><span class="amount-value">${formatAmount(s.amount)}</span> <span class="amount-currency">${s.currency}</span></p>
  </section>
  ${decision(s, token)}
</main>`;
  return layout({ title: `${s.gatewayName}: pay ${s.brandName}`, body });
}
