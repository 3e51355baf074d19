import type { InvoiceRow } from '../../domain/invoices/queries.ts';
import { isPayable } from '../../domain/invoices/pay.ts';
import { amountRemaining, invoiceNumber } from '../../domain/invoices/totals.ts';
import type { InvoiceLanguage, Translate } from '../../domain/invoices/catalog.ts';
import type { PageBrand } from '../../domain/brands/look.ts';
import { merchantHeader, supportContact } from './brand-parts.ts';
import { html } from './html.ts';
import { currencyLabel, formatAmountIn, formatDayIn, formatMoney, formatQuantityIn } from './i18n.ts';
import { layout, messagePage } from './layout.ts';
import { brandLookOf } from './link-page.ts';

/**
 * The hosted invoice page (`/invoices/<token>`): the invoice as the customer
 * reads it, what was paid and what is left, a Pay button while it can be paid
 * (a plain form: the POST creates the payment and continues on the normal
 * checkout), and the PDF. Every word comes from the invoice catalog.
 */
export interface InvoicePageInput {
  row: InvoiceRow;
  /** The brand's logo, colour and support contact, as the checkout shows them. */
  brand: PageBrand;
  customerName: string | null;
  t: Translate;
  lang: InvoiceLanguage;
  error?: string;
  amount?: string;
}

export function renderInvoicePage(p: InvoicePageInput): string {
  const { row: r, t } = p;
  // Amounts as the checkout writes them in the page's language (Bangla digits and lakh grouping in Bangla).
  const money = (v: string) => html`<span class="money">${formatMoney(p.lang, v, r.currency)}</span>`;
  const amount = (v: string) => formatAmountIn(p.lang, v);
  const look = brandLookOf(p.brand);
  const remaining = amountRemaining(r.total, r.amount_paid);
  const number = invoiceNumber(r.number);
  const payable = isPayable(r);
  const body = html`<main class="sheet invoice" id="invoice">
  ${r.mode === 'test' ? html`<p class="sandbox-banner" role="note">${t('testBanner')}</p>` : null}
  ${merchantHeader(p.lang, look, `${t('invoice')} · ${t('from')}`, html`<p class="reference mono">${number}</p>`)}
  <dl class="invoice-meta">
    <div><dt>${t('status')}</dt><dd><span class="invoice-status status-${r.status}">${t(`status.${r.status}`)}</span></dd></div>
    <div><dt>${t('dueDate')}</dt><dd>${formatDayIn(p.lang, r.due_day)}</dd></div>
    ${p.customerName ? html`<div><dt>${t('billedTo')}</dt><dd>${p.customerName}</dd></div>` : null}
  </dl>
  <table class="invoice-lines">
    <caption class="visually-hidden">${t('invoice')} ${number}</caption>
    <thead><tr><th scope="col">${t('description')}</th><th scope="col" class="num">${t('quantity')}</th><th scope="col" class="num">${t('unitPrice')}</th><th scope="col" class="num">${t('amount')}</th></tr></thead>
    <tbody>${r.lines.map((l) => html`<tr><td>${l.description}</td><td class="num">${formatQuantityIn(p.lang, l.quantity)}</td><td class="num">${amount(l.unit_price)}</td><td class="num">${amount(l.amount)}</td></tr>`)}</tbody>
  </table>
  <dl class="invoice-totals">
    <div><dt>${t('subtotal')}</dt><dd>${money(r.subtotal)}</dd></div>
    ${r.discount ? html`<div><dt>${r.discount.description}</dt><dd>-${money(r.discount.amount)}</dd></div>` : null}
    ${r.tax ? html`<div><dt>${r.tax.description}${r.tax.rate ? ` (${formatQuantityIn(p.lang, r.tax.rate)}%)` : ''}</dt><dd>${money(r.tax.amount)}</dd></div>` : null}
    <div class="grand"><dt>${t('total')}</dt><dd>${money(r.total)}</dd></div>
    <div><dt>${t('amountPaid')}</dt><dd id="invoice-paid">${money(r.amount_paid)}</dd></div>
    <div class="grand"><dt>${t('amountRemaining')}</dt><dd id="invoice-remaining">${money(remaining)}</dd></div>
  </dl>
  ${r.memo ? html`<section class="invoice-memo"><h2 class="section-title">${t('memo')}</h2><p>${r.memo}</p></section>` : null}
  ${p.error ? html`<p class="form-error" role="alert">${p.error}</p>` : null}
  ${r.status === 'paid' ? html`<p class="notice" role="status">${t('paidText')}</p>` : null}
  ${r.status === 'void' ? html`<p class="notice error" role="status">${t('voidText', { brand: r.brand_name })}</p>` : null}
  ${payable
    ? html`<form class="pay-form link-form" method="post" action="/invoices/${r.token}">
    <button type="submit" class="button primary" id="invoice-pay">${t('payNow', { amount: formatMoney(p.lang, remaining, r.currency) })}</button>
  </form>
  <details class="replace"${p.error ? html` open` : null}>
    <summary>${t('payPart')}</summary>
    <form class="replace-form" method="post" action="/invoices/${r.token}">
      <label for="invoice-amount">${t('payPartLabel', { currency: currencyLabel(p.lang, r.currency) })}</label>
      <input id="invoice-amount" name="amount" inputmode="decimal" autocomplete="off" required maxlength="20" value="${p.amount ?? ''}">
      <button type="submit" class="button secondary">${t('payPartButton')}</button>
    </form>
  </details>`
    : null}
  <p><a class="link" href="/invoices/${r.token}/pdf?lang=${p.lang}" download>${t('downloadPdf')}</a></p>
  <footer class="foot">${supportContact(p.lang, look)}<p class="fine secure">${t('secure')}</p></footer>
</main>`;
  return layout({ lang: p.lang, title: t('pageTitle', { number, brand: r.brand_name }), body, primaryColor: p.brand.primaryColor, path: p.error ? null : `/invoices/${r.token}` });
}

export function invoiceNotFoundPage(lang: InvoiceLanguage, t: Translate): string {
  return messagePage({ lang, title: t('notFoundTitle'), heading: t('notFoundTitle'), text: t('notFoundText') });
}
