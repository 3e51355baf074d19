import { CHECKOUT_PATH_PREFIX, type CheckoutGateway, type CheckoutPayment, type CheckoutTransaction } from '../../../contract/checkout/payments.ts';
import { merchantHeader, supportContact } from './brand-parts.ts';
import { html, safeHttpUrl, type SafeHtml } from './html.ts';
import { clientStrings, formatAmountIn, formatMoney, formatMomentIn, currencyLabel, t, tHtml, type Lang } from './i18n.ts';
import { layout } from './layout.ts';
import { walletSteps } from './wallet-steps.ts';

const money = (lang: Lang, amount: string, currency: string) => html`<span class="money">${formatMoney(lang, amount, currency)}</span>`;
const mono = (v: string) => html`<span class="mono">${v}</span>`;

function gatewayPanel(lang: Lang, p: CheckoutPayment, g: CheckoutGateway, index: number, only: boolean): SafeHtml {
  const id = `g${index}`;
  const conversion = g.converted
    ? html`<p class="conversion">${tHtml(lang, 'converted_from', { amount: money(lang, p.amount, p.currency) })}${g.exchange_rate
        ? html` ${tHtml(lang, 'converted_at', { from: p.currency, rate: formatAmountIn(lang, g.exchange_rate), to: g.currency })}`
        : null}</p>`
    : null;
  // One number to send: amount + fee when the customer pays the fee, the amount
  // when the merchant does (the merchant's fee is not the customer's business).
  const feeNote = g.fee !== '0.00' ? html`<p class="fee-note">${tHtml(lang, 'fee_included', { gateway: g.name, fee: money(lang, g.fee, g.currency) })}</p>` : null;
  const steps = g.type === 'manual' ? walletSteps(lang, g, p.reference) : null;
  const body =
    g.type === 'manual'
      ? html`<dl class="send">
        <div><dt>${t(lang, 'send_exactly')}</dt><dd><strong class="send-amount">${money(lang, g.amount_to_send, g.currency)}</strong>
          <button type="button" class="copy" data-copy="${g.amount_to_send}" aria-label="${t(lang, 'copy_amount')}">${t(lang, 'copy')}</button></dd></div>
        ${g.receiving_account
          ? html`<div><dt>${t(lang, 'to_account', { gateway: g.name })}</dt><dd><strong class="account mono">${g.receiving_account}</strong>
          <button type="button" class="copy" data-copy="${g.receiving_account}" aria-label="${t(lang, 'copy_account')}">${t(lang, 'copy')}</button></dd></div>`
          : null}
      </dl>
      ${feeNote}
      ${steps ? html`<details class="how-to" open><summary>${t(lang, 'how_to_pay', { gateway: g.name })}</summary>${steps}</details>` : null}
      ${g.instructions ? html`<p class="instructions">${g.instructions}</p>` : null}
      <form class="pay-form" data-gateway="${g.code}" novalidate>
        <label for="${id}-trx">${t(lang, 'trx_label', { gateway: g.name })}</label>
        <input id="${id}-trx" name="gateway_trx_id" required maxlength="100" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="${t(lang, 'trx_placeholder')}">
        <label for="${id}-sender">${t(lang, 'sender_label')} <span class="optional">${t(lang, 'optional')}</span></label>
        <input id="${id}-sender" name="sender_number" type="tel" maxlength="32" autocomplete="tel" inputmode="tel">
        <p class="form-error" role="alert" hidden></p>
        <button type="submit" class="button primary">${t(lang, 'sent_button')}</button>
      </form>`
      : html`<p class="hint">${t(lang, 'redirect_hint', { gateway: g.name })}</p>
      ${feeNote}
      <form class="pay-form" data-gateway="${g.code}" novalidate>
        <p class="form-error" role="alert" hidden></p>
        <button type="submit" class="button primary">${tHtml(lang, 'pay_button', { amount: money(lang, g.amount_to_send, g.currency) })}</button>
      </form>`;
  return html`<details class="gateway" name="gateway" data-gateway="${g.code}"${only ? html` open` : null}>
    <summary><span class="gateway-name">${g.name}</span><span class="gateway-amount">${money(lang, g.amount_to_send, g.currency)}</span></summary>
    <div class="gateway-body">
      ${conversion}
      ${body}
    </div>
  </details>`;
}

function failedNotice(lang: Lang, tr: CheckoutTransaction | null): SafeHtml | null {
  if (!tr || tr.status !== 'failed') return null;
  return html`<p class="notice error" role="status">${tHtml(lang, 'failed_notice', { gateway: tr.gateway_name, reason: tr.failure_reason ? `: ${tr.failure_reason}` : '' })}</p>`;
}

function payableSection(lang: Lang, p: CheckoutPayment): SafeHtml {
  const choices = p.gateways.length
    ? html`<div class="gateways">${p.gateways.map((g, i) => gatewayPanel(lang, p, g, i, p.gateways.length === 1))}</div>`
    : html`<p class="notice">${t(lang, 'no_method', { brand: p.brand.name })}</p>`;
  return html`<section class="pay" aria-labelledby="choose">
    ${failedNotice(lang, p.transaction)}
    <h2 id="choose" class="section-title">${t(lang, 'choose_how')}</h2>
    ${choices}
    <noscript><p class="notice">${t(lang, 'needs_js')}</p></noscript>
  </section>`;
}

/**
 * Someone may have typed a wrong (or made-up) id: the customer can put the right
 * one in its place while it waits, a few times (the server counts and refuses).
 */
function replaceForm(lang: Lang, tr: CheckoutTransaction): SafeHtml | null {
  const left = tr.gateway_trx_id_changes_left;
  if (tr.status !== 'awaiting_verification' || left === null) return null;
  if (left === 0) return html`<p class="fine">${t(lang, 'cannot_change')}</p>`;
  return html`<details class="replace">
      <summary>${t(lang, 'change_summary')}</summary>
      <form class="replace-form" novalidate>
        <label for="replace-trx">${t(lang, 'correct_trx_label', { gateway: tr.gateway_name })}</label>
        <input id="replace-trx" name="gateway_trx_id" required maxlength="100" autocomplete="off" autocapitalize="characters" spellcheck="false">
        <label for="replace-sender">${t(lang, 'sender_label')} <span class="optional">${t(lang, 'optional')}</span></label>
        <input id="replace-sender" name="sender_number" type="tel" maxlength="32" autocomplete="tel" inputmode="tel">
        <p class="form-error" role="alert" hidden></p>
        <p class="fine">${left === 1 ? t(lang, 'changes_left_one') : t(lang, 'changes_left_many', { n: formatAmountIn(lang, String(left)) })}</p>
        <button type="submit" class="button secondary">${t(lang, 'change_button')}</button>
      </form>
    </details>`;
}

function waitingSection(lang: Lang, tr: CheckoutTransaction): SafeHtml {
  const gatewayUrl = safeHttpUrl(tr.redirect_url);
  const vars = { trx: html`<strong class="mono">${tr.gateway_trx_id}</strong>`, amount: money(lang, tr.amount_to_send, tr.currency), gateway: tr.gateway_name };
  // No SMS proves the id yet and the merchant's phone is being asked for it (pull-on-submit): say so; the stream tells when it answers.
  const text =
    tr.status === 'awaiting_verification' && tr.phone_check_until
      ? html`<h2 class="status-title">${t(lang, 'checking_phone_title')}</h2>
    <p>${tHtml(lang, 'checking_phone_text', vars)}</p>`
      : tr.status === 'awaiting_verification'
      ? html`<h2 class="status-title">${t(lang, 'waiting_verification_title')}</h2>
    <p>${tHtml(lang, 'waiting_verification_text', vars)}</p>`
      : html`<h2 class="status-title">${t(lang, 'waiting_gateway_title', { gateway: tr.gateway_name })}</h2>
    <p>${tHtml(lang, 'waiting_gateway_text', vars)}</p>`;
  return html`<section class="status waiting${tr.phone_check_until ? ' checking-phone' : ''}" aria-live="polite">
    <div class="spinner" aria-hidden="true"></div>
    ${text}
    <p class="fine">${tHtml(lang, 'updates_itself', { ref: mono(tr.trx_id) })}</p>
    ${replaceForm(lang, tr)}
    ${gatewayUrl ? html`<a class="button secondary" href="${gatewayUrl}">${t(lang, 'continue_on', { gateway: tr.gateway_name })}</a>` : null}
  </section>`;
}

function completedSection(lang: Lang, p: CheckoutPayment): SafeHtml {
  const tr = p.transaction;
  const next = safeHttpUrl(p.redirect_url);
  return html`<section class="status done" aria-live="polite">
    <div class="status-icon ok" aria-hidden="true">✓</div>
    <h2 class="status-title">${t(lang, 'received_title')}</h2>
    ${tr ? html`<p>${tHtml(lang, 'received_text', { amount: money(lang, tr.amount_to_send, tr.currency), gateway: tr.gateway_name, ref: mono(tr.trx_id) })}</p>` : null}
    ${next
      ? html`<p class="fine">${t(lang, 'taking_back', { brand: p.brand.name })}</p><a class="button primary" id="continue" href="${next}">${t(lang, 'return_to', { brand: p.brand.name })}</a>`
      : html`<p class="fine">${t(lang, 'close_page')}</p>`}
  </section>`;
}

function expiredSection(lang: Lang, p: CheckoutPayment, cancelUrl: string | null): SafeHtml {
  const back = safeHttpUrl(cancelUrl);
  return html`<section class="status expired">
    <div class="status-icon warn" aria-hidden="true">!</div>
    <h2 class="status-title">${t(lang, 'expired_title')}</h2>
    <p>${t(lang, 'expired_text', { brand: p.brand.name })}</p>
    ${back ? html`<a class="button secondary" href="${back}">${t(lang, 'back_to', { brand: p.brand.name })}</a>` : null}
  </section>`;
}

/** Canceled by the merchant, or open but no gateway can take it: nothing to pay here, and no gateway buttons. */
function closedSection(lang: Lang, p: CheckoutPayment, cancelUrl: string | null, title: string, text: string): SafeHtml {
  const back = safeHttpUrl(cancelUrl);
  return html`<section class="status expired">
    <div class="status-icon warn" aria-hidden="true">!</div>
    <h2 class="status-title">${title}</h2>
    <p>${t(lang, 'please_contact', { text, brand: p.brand.name })}</p>
    ${back ? html`<a class="button secondary" href="${back}">${t(lang, 'back_to', { brand: p.brand.name })}</a>` : null}
  </section>`;
}

function stateSection(lang: Lang, p: CheckoutPayment, cancelUrl: string | null): SafeHtml {
  if (p.status === 'completed') return completedSection(lang, p);
  if (p.status === 'expired') return expiredSection(lang, p, cancelUrl);
  if (p.status === 'canceled') return closedSection(lang, p, cancelUrl, t(lang, 'canceled_title'), t(lang, 'canceled_text', { brand: p.brand.name }));
  // The reason comes from the gateway quote, in English (a merchant-facing rule); the frame around it is translated.
  if (p.not_payable_reason) return closedSection(lang, p, cancelUrl, t(lang, 'not_payable_title'), p.not_payable_reason);
  if (p.payable) return payableSection(lang, p);
  return waitingSection(lang, p.transaction!);
}

/** The hosted checkout page: server-rendered for the payment's current state; checkout.js submits, polls and redirects. */
export function renderCheckoutPage(p: CheckoutPayment, opts: { lang: Lang; cancelUrl: string | null; timeZone: string }): string {
  const { lang } = opts;
  const cancellable = p.status !== 'completed' && p.status !== 'expired' && p.status !== 'canceled';
  const body = html`<main class="sheet" id="checkout"
  data-api="${CHECKOUT_PATH_PREFIX}/payments/${p.payment_id}"
  data-status="${p.status}"
  data-checking-phone="${p.transaction?.phone_check_until ? 'true' : 'false'}"
  data-expires-at="${p.expires_at}"
  data-redirect-url="${safeHttpUrl(p.redirect_url) ?? ''}"
  data-strings="${JSON.stringify(clientStrings(lang))}">
  ${merchantHeader(lang, p.brand, t(lang, 'pay_to'), p.reference ? html`<p class="reference">${t(lang, 'reference')} ${mono(p.reference)}</p>` : null)}
  <section class="due" aria-label="${t(lang, 'amount_due')}">
    <p class="label">${p.status === 'completed' ? t(lang, 'amount_paid') : t(lang, 'amount_due')}</p>
    <p class="amount"><span class="amount-value">${formatAmountIn(lang, p.amount)}</span> <span class="amount-currency">${currencyLabel(lang, p.currency)}</span></p>
    ${p.status === 'completed' || p.status === 'expired' || p.status === 'canceled'
      ? null
      : html`<p class="expires">${t(lang, 'pay_before')} <time datetime="${p.expires_at}">${formatMomentIn(lang, p.expires_at, opts.timeZone)}</time></p>`}
  </section>
  ${stateSection(lang, p, opts.cancelUrl)}
  <footer class="foot">
    ${cancellable ? html`<button type="button" class="link" id="cancel">${t(lang, 'cancel_return', { brand: p.brand.name })}</button>` : null}
    <p class="page-error" role="alert" hidden></p>
    ${supportContact(lang, p.brand)}
    <p class="fine secure">${t(lang, 'secure_checkout')}</p>
  </footer>
</main>`;
  return layout({ lang, title: t(lang, 'page_title_pay', { brand: p.brand.name }), body, script: true, primaryColor: p.brand.primary_color, path: `/checkout/${p.payment_id}` });
}
