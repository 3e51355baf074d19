import { AppError } from '../../../contract/common/errors.ts';
import { escapeControlCharacters } from '../../../contract/common/text.ts';
import type { InvoiceResource } from '../../../contract/merchant/invoices.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import type { AppDeps } from '../../deps.ts';
import { mailFailureReason, sendMail } from '../../infra/mail.ts';
import { currencyLabel, formatAmountIn, formatDayIn } from '../display.ts';
import { transaction, type Db } from '../db.ts';
import { invoiceNumber } from './totals.ts';
import { translator, type InvoiceLanguage } from './catalog.ts';
import { selectInvoiceById, updateInvoiceRow, type InvoiceRow } from './queries.ts';
import { finalizeLocked, invoiceCustomer, invoiceUrls, loadOwnInvoice, toInvoiceResource } from './service.ts';
import { sql } from 'kysely';

/**
 * The invoice e-mail, plain text. Every merchant value is printed with its
 * control characters escaped, so a line break in a brand name or memo cannot
 * forge a line or a header. A test-mode invoice says so in the subject and body.
 */
export function renderInvoiceMail(r: InvoiceRow, opts: { customerName: string | null; url: string; lang?: InvoiceLanguage }): { subject: string; text: string } {
  const lang = opts.lang ?? 'en';
  const t = translator(lang);
  const show = (v: string) => escapeControlCharacters(v);
  const test = r.mode === 'test';
  const vars = { brand: show(r.brand_name), number: invoiceNumber(r.number), amount: formatAmountIn(lang, r.total), currency: currencyLabel(lang, r.currency), due: formatDayIn(lang, r.due_day), url: opts.url };
  const subject = t('mailSubject', { ...vars, test: test ? t('mailTestPrefix') : '' });
  const lines = [
    t('mailGreeting', { name: opts.customerName ? ` ${show(opts.customerName)}` : '' }),
    '',
    t('mailBody', vars),
    ...(r.memo ? ['', show(r.memo)] : []),
    '',
    t('mailLink', vars),
    ...(test ? ['', t('mailTest')] : []),
    '',
    t('mailFooter', vars),
  ];
  return { subject, text: `${lines.join('\n')}\n` };
}

export type InvoiceMailDeps = Pick<AppDeps, 'config' | 'crypto' | 'logger'>;

/**
 * E-mails the invoice's link to its customer through the service's one SMTP
 * sender (infra/mail.ts), then notes when. A draft is finalized first (a link
 * to a draft would show "not found"); a void invoice is refused. Sent while the
 * row is locked, so two sends at once do not both finalize; a failed send
 * rolls the finalize back, and the merchant's call gets SERVICE_UNAVAILABLE.
 */
export async function sendInvoice(db: Db, deps: InvoiceMailDeps, scope: { brandId: number; mode: Mode } | { row: InvoiceRow }, id: string, lang: InvoiceLanguage = 'en'): Promise<InvoiceResource> {
  const base = deps.config.PUBLIC_BASE_URL;
  return transaction(db, async (tx) => {
    let row = 'row' in scope ? scope.row : await loadOwnInvoice(tx, scope.brandId, scope.mode, id, true);
    if (row.status === 'void') throw new AppError('INVOICE_VOID', 'This invoice is void and cannot be sent');
    if (row.status === 'draft') row = await finalizeLocked(tx, row);
    const customer = invoiceCustomer(deps.crypto, row);
    if (!customer.email) throw new AppError('VALIDATION_ERROR', 'The customer has no e-mail address to send the invoice to', { field: 'customer.email' });
    const { SMTP_URL, RECEIPT_EMAIL_FROM } = deps.config;
    if (!SMTP_URL) throw new AppError('SERVICE_UNAVAILABLE', 'No SMTP server is configured (SMTP_URL): the invoice cannot be e-mailed');
    // The link opens the page in the e-mail's language (the page's `?lang=`, which it then remembers).
    const hosted = invoiceUrls(base, row.token).hosted_url;
    const { subject, text } = renderInvoiceMail(row, { customerName: customer.name, url: lang === 'en' ? hosted : `${hosted}?lang=${lang}`, lang });
    try {
      await sendMail({ smtpUrl: SMTP_URL, from: { name: row.brand_name, address: RECEIPT_EMAIL_FROM }, to: [customer.email], subject, text });
    } catch (err) {
      // The SMTP reply code only: never the address or the URL.
      const reason = mailFailureReason(err);
      deps.logger.warn({ invoice_id: row.uuid, error: reason }, 'invoice e-mail not sent');
      throw new AppError('SERVICE_UNAVAILABLE', `The mail server refused the invoice e-mail (${reason})`);
    }
    await updateInvoiceRow(tx, row.id, { last_sent_at: sql<Date>`now()` });
    deps.logger.info({ invoice_id: row.uuid }, 'invoice e-mail sent');
    return toInvoiceResource(deps.crypto, await selectInvoiceById(tx, row.id), base);
  });
}
