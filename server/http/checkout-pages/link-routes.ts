import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import QRCode from 'qrcode';
import { AppError } from '../../../contract/common/errors.ts';
import type { AppDeps } from '../../deps.ts';
import { paymentLinkUrls } from '../../domain/payment-links/service.ts';
import { findPublicLink, visitPaymentLink } from '../../domain/payment-links/visit.ts';
import { selectPageBrand } from '../../domain/brands/look.ts';
import { pageLanguage, t, type Lang } from './i18n.ts';
import { brandDisabledPage, messagePage } from './layout.ts';
import { linkUnavailablePage, renderLinkPage } from './link-page.ts';

interface PageTools {
  page(deps: AppDeps, fn: (req: Request, res: Response) => Promise<void>): RequestHandler;
  sendPage(res: Response, status: number, page: string): void;
  /** The per-address checkout limit (routes.ts): these pages read the database, and a visit creates a payment. */
  limited: RequestHandler;
}

const linkNotFoundPage = (lang: Lang) =>
  messagePage({ lang, title: t(lang, 'link_not_found'), heading: t(lang, 'link_not_found'), text: t(lang, 'link_not_found_text') });

/**
 * The public side of payment links: the page (GET), the visit that creates a
 * payment and redirects to its checkout (POST, a plain form), and the link's QR
 * code as SVG and PNG (made with the `qrcode` library).
 */
export function paymentLinkPages(deps: AppDeps, router: Router, tools: PageTools): void {
  const { page, sendPage, limited } = tools;
  const form = express.urlencoded({ extended: false, limit: '2kb', parameterLimit: 5 });
  const id = (req: Request) => String(req.params.link_id ?? '');

  router.get(
    '/pay/:link_id',
    limited,
    page(deps, async (req, res) => {
      const lang = pageLanguage(req, res);
      const link = await findPublicLink(req.db, id(req));
      if (!link) return sendPage(res, 404, linkNotFoundPage(lang));
      if (!link.brandActive) return sendPage(res, 403, brandDisabledPage(lang));
      if (link.status !== 'active') return sendPage(res, 410, linkUnavailablePage(lang, link));
      sendPage(res, 200, renderLinkPage(link, await selectPageBrand(req.db, link.brandId), { lang }));
    }),
  );

  router.post('/pay/:link_id', limited, form, page(deps, async (req, res) => {
    const lang = pageLanguage(req, res);
    const raw = typeof req.body?.amount === 'string' ? (req.body.amount as string) : undefined;
    try {
      const result = await visitPaymentLink(req.db, deps.crypto, id(req), { amount: raw }, { publicBaseUrl: deps.config.PUBLIC_BASE_URL });
      if (result.kind === 'not_found') return sendPage(res, 404, linkNotFoundPage(lang));
      if (result.kind === 'refused') {
        return result.link.brandActive ? sendPage(res, 410, linkUnavailablePage(lang, result.link)) : sendPage(res, 403, brandDisabledPage(lang));
      }
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(303, `/checkout/${result.paymentId}`);
    } catch (err) {
      // The customer's amount or a gateway refusal: the form again, saying why.
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      const link = await findPublicLink(req.db, id(req));
      if (!link) return sendPage(res, 404, linkNotFoundPage(lang));
      // The refusal's message is the API's (English); the page around it is in the customer's language.
      sendPage(res, 400, renderLinkPage(link, await selectPageBrand(req.db, link.brandId), { lang, error: err.message, amount: raw?.slice(0, 20) }));
    }
  }));

  const qr = (type: 'svg' | 'png') =>
    page(deps, async (req, res) => {
      const link = await findPublicLink(req.db, id(req));
      if (!link) return sendPage(res, 404, linkNotFoundPage(pageLanguage(req, res)));
      const { url } = paymentLinkUrls(deps.config.PUBLIC_BASE_URL, link.publicId);
      res.setHeader('Cache-Control', 'public, max-age=86400');
      if (type === 'svg') {
        res.type('image/svg+xml').send(await QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }));
      } else {
        res.type('image/png').send(await QRCode.toBuffer(url, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 512 }));
      }
    });
  router.get('/pay/:link_id/qr.svg', limited, qr('svg'));
  router.get('/pay/:link_id/qr.png', limited, qr('png'));
}

