import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { AppError } from '../../../contract/common/errors.ts';
import type { AppDeps } from '../../deps.ts';
import { translator } from '../../domain/invoices/catalog.ts';
import { findPublicInvoice, payInvoice } from '../../domain/invoices/pay.ts';
import { renderInvoicePdf } from '../../domain/invoices/pdf.ts';
import { invoiceCustomer } from '../../domain/invoices/service.ts';
import { selectPageBrand } from '../../domain/brands/look.ts';
import { invoiceNumber } from '../../domain/invoices/totals.ts';
import { ASSETS_PATH, brandDisabledPage } from './layout.ts';
import { invoiceNotFoundPage, renderInvoicePage } from './invoice-page.ts';
import { pageLanguage } from './i18n.ts';

interface PageTools {
  page(deps: AppDeps, fn: (req: Request, res: Response) => Promise<void>): RequestHandler;
  sendPage(res: Response, status: number, page: string): void;
  /** The per-address checkout limit (routes.ts): these pages read the database, and Pay creates a payment. */
  limited: RequestHandler;
}

/**
 * The public side of invoices: the hosted page (GET), Pay (POST, a plain
 * form: creates a payment for the invoice and redirects to its checkout), and
 * the PDF. The token in the URL is the only credential; a draft is not found. The
 * language is the checkout pages' choice (i18n.ts: `?lang=`, its cookie,
 * `Accept-Language`); the words come from the invoice catalog.
 */
export function invoicePages(deps: AppDeps, router: Router, tools: PageTools): void {
  const { page, sendPage, limited } = tools;
  const form = express.urlencoded({ extended: false, limit: '2kb', parameterLimit: 5 });
  const token = (req: Request) => String(req.params.token ?? '');

  // Bangla text needs a Bengali font, which many phones and desktops lack: the page's CSS loads this one (same origin, as the CSP asks).
  const fontDir = path.join(path.dirname(createRequire(import.meta.url).resolve('@fontsource/noto-sans-bengali/package.json')), 'files');
  router.use(`${ASSETS_PATH}/fonts`, express.static(fontDir, { index: false, fallthrough: false, maxAge: '7d', dotfiles: 'deny' }));

  const show = async (req: Request, res: Response, status: number, extra: { error?: string; amount?: string } = {}) => {
    const lang = pageLanguage(req, res);
    const t = translator(lang);
    const row = await findPublicInvoice(req.db, token(req));
    if (!row) return sendPage(res, 404, invoiceNotFoundPage(lang, t));
    if (row.brand_status !== 'active') return sendPage(res, 403, brandDisabledPage(lang));
    sendPage(res, status, renderInvoicePage({ row, brand: await selectPageBrand(req.db, row.brand_id), customerName: invoiceCustomer(deps.crypto, row).name, t, lang, ...extra }));
  };

  router.get('/invoices/:token', limited, page(deps, (req, res) => show(req, res, 200)));

  router.post('/invoices/:token', limited, form, page(deps, async (req, res) => {
    const raw = typeof req.body?.amount === 'string' ? (req.body.amount as string) : undefined;
    const lang = pageLanguage(req, res);
    const t = translator(lang);
    try {
      const result = await payInvoice(req.db, deps.crypto, token(req), { amount: raw }, { publicBaseUrl: deps.config.PUBLIC_BASE_URL, t, lang });
      if (!result) return sendPage(res, 404, invoiceNotFoundPage(lang, t));
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, `/checkout/${result.paymentId}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      if (err.code === 'BRAND_DISABLED') return sendPage(res, 403, brandDisabledPage(lang));
      // A void or paid invoice, or a bad part amount: the page again, saying why.
      await show(req, res, err.status, { error: err.message, amount: raw?.slice(0, 20) });
    }
  }));

  router.get('/invoices/:token/pdf', limited, page(deps, async (req, res) => {
    const lang = pageLanguage(req, res);
    const row = await findPublicInvoice(req.db, token(req));
    if (!row) return sendPage(res, 404, invoiceNotFoundPage(lang, translator(lang)));
    if (row.brand_status !== 'active') return sendPage(res, 403, brandDisabledPage(lang));
    const pdf = await renderInvoicePdf({ row, customerName: invoiceCustomer(deps.crypto, row).name, lang });
    res.status(200).setHeader('Cache-Control', 'no-store').setHeader('Content-Disposition', `attachment; filename="${invoiceNumber(row.number)}.pdf"`).type('application/pdf').send(pdf);
  }));
}
