import { CHECKOUT_PATH_PREFIX, type CheckoutGateway, type CheckoutPayment, type CheckoutTransaction } from '../../../contract/checkout/payments.ts';
import { formatAmount, formatDeadline, initialOf } from './format.ts';
import { html, safeHttpUrl, type SafeHtml } from './html.ts';
import { layout } from './layout.ts';

const money = (amount: string, currency: string) => html`<span class="money">${formatAmount(amount)}&nbsp;${currency}</span>`;

function gatewayPanel(p: CheckoutPayment, g: CheckoutGateway, index: number, only: boolean): SafeHtml {
  const id = `g${index}`;
  const conversion = g.converted
    ? html`<p class="conversion">Converted from ${money(p.amount, p.currency)}${g.exchange_rate ? html` at 1&nbsp;${p.currency} = ${g.exchange_rate}&nbsp;${g.currency}` : null}</p>`
    : null;
  // One number to send: amount + fee when the customer pays the fee, the amount
  // when the merchant does (the merchant's fee is not the customer's business).
  const feeNote = g.fee !== '0.00' ? html`<p class="fee-note">Includes the ${g.name} fee of ${money(g.fee, g.currency)}.</p>` : null;
  const body =
    g.type === 'manual'
      ? html`<dl class="send">
        <div><dt>Send exactly</dt><dd><strong class="send-amount">${money(g.amount_to_send, g.currency)}</strong>
          <button type="button" class="copy" data-copy="${g.amount_to_send}" aria-label="Copy amount">Copy</button></dd></div>
        ${g.receiving_account
          ? html`<div><dt>To ${g.name} account</dt><dd><strong class="account mono">${g.receiving_account}</strong>
          <button type="button" class="copy" data-copy="${g.receiving_account}" aria-label="Copy account number">Copy</button></dd></div>`
          : null}
      </dl>
      ${feeNote}
      ${g.instructions ? html`<p class="instructions">${g.instructions}</p>` : null}
      <form class="pay-form" data-gateway="${g.code}" novalidate>
        <label for="${id}-trx">Transaction ID from ${g.name}'s confirmation</label>
        <input id="${id}-trx" name="gateway_trx_id" required maxlength="100" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="e.g. 8N7A6D5C4B">
        <label for="${id}-sender">Number you sent from <span class="optional">(optional)</span></label>
        <input id="${id}-sender" name="sender_number" type="tel" maxlength="32" autocomplete="tel" inputmode="tel">
        <p class="form-error" role="alert" hidden></p>
        <button type="submit" class="button primary">I have sent the money</button>
      </form>`
      : html`<p class="hint">You will be taken to ${g.name} to finish paying.</p>
      ${feeNote}
      <form class="pay-form" data-gateway="${g.code}" novalidate>
        <p class="form-error" role="alert" hidden></p>
        <button type="submit" class="button primary">Pay ${money(g.amount_to_send, g.currency)}</button>
      </form>`;
  return html`<details class="gateway" name="gateway" data-gateway="${g.code}"${only ? html` open` : null}>
    <summary><span class="gateway-name">${g.name}</span><span class="gateway-amount">${money(g.amount_to_send, g.currency)}</span></summary>
    <div class="gateway-body">
      ${conversion}
      ${body}
    </div>
  </details>`;
}

function failedNotice(t: CheckoutTransaction | null): SafeHtml | null {
  if (!t || t.status !== 'failed') return null;
  return html`<p class="notice error" role="status">Your payment with ${t.gateway_name} did not go through${t.failure_reason ? html`: ${t.failure_reason}` : null}. You can try again.</p>`;
}

function payableSection(p: CheckoutPayment): SafeHtml {
  const choices = p.gateways.length
    ? html`<div class="gateways">${p.gateways.map((g, i) => gatewayPanel(p, g, i, p.gateways.length === 1))}</div>`
    : html`<p class="notice">No payment method can take this payment right now. Please contact ${p.brand.name}.</p>`;
  return html`<section class="pay" aria-labelledby="choose">
    ${failedNotice(p.transaction)}
    <h2 id="choose" class="section-title">Choose how to pay</h2>
    ${choices}
    <noscript><p class="notice">This page needs JavaScript turned on to send your payment.</p></noscript>
  </section>`;
}

/**
 * Someone may have typed a wrong (or made-up) id: the customer can put the right
 * one in its place while it waits, a few times (the server counts and refuses).
 */
function replaceForm(t: CheckoutTransaction): SafeHtml | null {
  const left = t.gateway_trx_id_changes_left;
  if (t.status !== 'awaiting_verification' || left === null) return null;
  if (left === 0) return html`<p class="fine">Wrong transaction ID? It can no longer be changed here; please contact the shop.</p>`;
  return html`<details class="replace">
      <summary>Wrong transaction ID? Change it</summary>
      <form class="replace-form" novalidate>
        <label for="replace-trx">Correct transaction ID from ${t.gateway_name}</label>
        <input id="replace-trx" name="gateway_trx_id" required maxlength="100" autocomplete="off" autocapitalize="characters" spellcheck="false">
        <label for="replace-sender">Number you sent from <span class="optional">(optional)</span></label>
        <input id="replace-sender" name="sender_number" type="tel" maxlength="32" autocomplete="tel" inputmode="tel">
        <p class="form-error" role="alert" hidden></p>
        <p class="fine">You can change it ${left === 1 ? 'one more time' : html`${left} more times`}.</p>
        <button type="submit" class="button secondary">Change transaction ID</button>
      </form>
    </details>`;
}

function waitingSection(t: CheckoutTransaction): SafeHtml {
  const gatewayUrl = safeHttpUrl(t.redirect_url);
  // No SMS proves the id yet and the merchant's phone is being asked for it (pull-on-submit): say so; the stream tells when it answers.
  const text =
    t.status === 'awaiting_verification' && t.phone_check_until
      ? html`<h2 class="status-title">Checking with the merchant's phone</h2>
    <p>We received your transaction ID <strong class="mono">${t.gateway_trx_id}</strong> for ${money(t.amount_to_send, t.currency)} sent with ${t.gateway_name}, and are asking the merchant's phone for the ${t.gateway_name} confirmation. This usually takes a few seconds.</p>`
      : t.status === 'awaiting_verification'
      ? html`<h2 class="status-title">Waiting for verification</h2>
    <p>We received your transaction ID <strong class="mono">${t.gateway_trx_id}</strong> for ${money(t.amount_to_send, t.currency)} sent with ${t.gateway_name}.</p>`
      : html`<h2 class="status-title">Waiting for ${t.gateway_name}</h2>
    <p>${t.gateway_name} has not confirmed your payment of ${money(t.amount_to_send, t.currency)} yet.</p>`;
  return html`<section class="status waiting${t.phone_check_until ? ' checking-phone' : ''}" aria-live="polite">
    <div class="spinner" aria-hidden="true"></div>
    ${text}
    <p class="fine">This page updates by itself; you can keep it open. Reference <span class="mono">${t.trx_id}</span></p>
    ${replaceForm(t)}
    ${gatewayUrl ? html`<a class="button secondary" href="${gatewayUrl}">Continue on ${t.gateway_name}</a>` : null}
  </section>`;
}

function completedSection(p: CheckoutPayment): SafeHtml {
  const t = p.transaction;
  const next = safeHttpUrl(p.redirect_url);
  return html`<section class="status done" aria-live="polite">
    <div class="status-icon ok" aria-hidden="true">✓</div>
    <h2 class="status-title">Payment received</h2>
    ${t ? html`<p>${money(t.amount_to_send, t.currency)} paid with ${t.gateway_name}. Reference <span class="mono">${t.trx_id}</span></p>` : null}
    ${next
      ? html`<p class="fine">Taking you back to ${p.brand.name}…</p><a class="button primary" id="continue" href="${next}">Return to ${p.brand.name}</a>`
      : html`<p class="fine">You can close this page.</p>`}
  </section>`;
}

function expiredSection(p: CheckoutPayment, cancelUrl: string | null): SafeHtml {
  const back = safeHttpUrl(cancelUrl);
  return html`<section class="status expired">
    <div class="status-icon warn" aria-hidden="true">!</div>
    <h2 class="status-title">Payment link has expired</h2>
    <p>This link can no longer be paid. Ask ${p.brand.name} for a new payment link.</p>
    ${back ? html`<a class="button secondary" href="${back}">Back to ${p.brand.name}</a>` : null}
  </section>`;
}

/** Canceled by the merchant, or open but no gateway can take it: nothing to pay here, and no gateway buttons. */
function closedSection(p: CheckoutPayment, cancelUrl: string | null, title: string, text: string): SafeHtml {
  const back = safeHttpUrl(cancelUrl);
  return html`<section class="status expired">
    <div class="status-icon warn" aria-hidden="true">!</div>
    <h2 class="status-title">${title}</h2>
    <p>${text} Please contact ${p.brand.name}.</p>
    ${back ? html`<a class="button secondary" href="${back}">Back to ${p.brand.name}</a>` : null}
  </section>`;
}

function stateSection(p: CheckoutPayment, cancelUrl: string | null): SafeHtml {
  if (p.status === 'completed') return completedSection(p);
  if (p.status === 'expired') return expiredSection(p, cancelUrl);
  if (p.status === 'canceled') return closedSection(p, cancelUrl, 'Payment canceled', `${p.brand.name} canceled this payment; it can no longer be paid.`);
  if (p.not_payable_reason) return closedSection(p, cancelUrl, 'This payment cannot be paid here', p.not_payable_reason);
  if (p.payable) return payableSection(p);
  return waitingSection(p.transaction!);
}

/** The hosted checkout page: server-rendered for the payment's current state; checkout.js submits, polls and redirects. */
export function renderCheckoutPage(p: CheckoutPayment, opts: { cancelUrl: string | null; timeZone?: string | null }): string {
  const cancellable = p.status !== 'completed' && p.status !== 'expired' && p.status !== 'canceled';
  const body = html`<main class="sheet" id="checkout"
  data-api="${CHECKOUT_PATH_PREFIX}/payments/${p.payment_id}"
  data-status="${p.status}"
  data-checking-phone="${p.transaction?.phone_check_until ? 'true' : 'false'}"
  data-expires-at="${p.expires_at}"
  data-redirect-url="${safeHttpUrl(p.redirect_url) ?? ''}">
  <header class="merchant">
    <div class="badge" aria-hidden="true">${initialOf(p.brand.name)}</div>
    <div class="merchant-text">
      <p class="eyebrow">Pay to</p>
      <h1 class="brand">${p.brand.name}</h1>
      ${p.reference ? html`<p class="reference">Reference <span class="mono">${p.reference}</span></p>` : null}
    </div>
  </header>
  <section class="due" aria-label="Amount due">
    <p class="label">${p.status === 'completed' ? 'Amount paid' : 'Amount due'}</p>
    <p class="amount"><span class="amount-value">${formatAmount(p.amount)}</span> <span class="amount-currency">${p.currency}</span></p>
    ${p.status === 'completed' || p.status === 'expired' || p.status === 'canceled'
      ? null
      : html`<p class="expires">Pay before <time datetime="${p.expires_at}">${formatDeadline(p.expires_at, opts.timeZone ?? null)}</time></p>`}
  </section>
  ${stateSection(p, opts.cancelUrl)}
  <footer class="foot">
    ${cancellable ? html`<button type="button" class="link" id="cancel">Cancel and return to ${p.brand.name}</button>` : null}
    <p class="page-error" role="alert" hidden></p>
    <p class="fine secure">Secure checkout</p>
  </footer>
</main>`;
  return layout({ title: `Pay ${p.brand.name}`, body, script: true });
}
