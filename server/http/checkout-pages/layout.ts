import { html, type SafeHtml } from './html.ts';
import { formatAmountIn, languageSwitch, t, tHtml, type Lang } from './i18n.ts';

export const ASSETS_PATH = '/checkout/assets';
/** The brand colour's stylesheet: `/checkout/theme/{rrggbb}.css` (routes.ts). */
export const THEME_PATH = '/checkout/theme';

export interface LayoutOptions {
  lang: Lang;
  title: string;
  body: SafeHtml;
  script?: boolean;
  /** The brand's `#rrggbb`, when it chose one. */
  primaryColor?: string | null;
  /** The page's own path, for the language switch's links; none: no switch (answers to a POST). */
  path?: string | null;
}

/**
 * The page shell: styles and the one script come from our own origin only (see
 * the CSP in routes.ts). The brand's colour is a stylesheet of its own rather
 * than an inline style, so the CSP needs no 'unsafe-inline'.
 */
export function layout(opts: LayoutOptions): string {
  const color = opts.primaryColor && /^#[0-9a-f]{6}$/i.test(opts.primaryColor) ? opts.primaryColor.slice(1).toLowerCase() : null;
  return html`<!doctype html>
<html lang="${opts.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light">
<title>${opts.title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSETS_PATH}/checkout.css">
${color ? html`<link rel="stylesheet" href="${THEME_PATH}/${color}.css">` : null}
${opts.script ? html`<script src="${ASSETS_PATH}/checkout.js" defer></script>` : null}
</head>
<body>
${opts.path ? languageSwitch(opts.lang, opts.path) : null}
${opts.body}
</body>
</html>
`.text;
}

export function messagePage(opts: { lang: Lang; title: string; heading: string; text: string; requestId?: string; path?: string | null }): string {
  return layout({
    lang: opts.lang,
    title: opts.title,
    path: opts.path,
    body: html`<main class="sheet">
  <section class="status">
    <div class="status-icon warn" aria-hidden="true">!</div>
    <h1 class="status-title">${opts.heading}</h1>
    <p>${opts.text}</p>
    ${opts.requestId ? html`<p class="fine">${tHtml(opts.lang, 'request_id', { id: opts.requestId })}</p>` : null}
  </section>
</main>`,
  });
}

export function notFoundPage(lang: Lang): string {
  return messagePage({ lang, title: t(lang, 'not_found_title'), heading: t(lang, 'not_found_title'), text: t(lang, 'not_found_text') });
}

/** A disabled brand's checkout and sandbox pages: nothing can be paid, and nothing says more about the merchant. */
export function brandDisabledPage(lang: Lang): string {
  return messagePage({ lang, title: t(lang, 'disabled_title'), heading: t(lang, 'disabled_heading'), text: t(lang, 'disabled_text') });
}

export function errorPage(lang: Lang, requestId: string): string {
  return messagePage({ lang, title: t(lang, 'error_title'), heading: t(lang, 'error_title'), text: t(lang, 'error_text'), requestId });
}

/** A refusal by the rate limiter (429): the page says when to come back; `Retry-After` says it to machines. */
export function tooManyRequestsPage(lang: Lang, retryAfterSeconds: string | undefined): string {
  return messagePage({
    lang,
    title: t(lang, 'too_many_title'),
    heading: t(lang, 'too_many_title'),
    text: retryAfterSeconds ? t(lang, 'too_many_text_in', { seconds: formatAmountIn(lang, retryAfterSeconds) }) : t(lang, 'too_many_text'),
  });
}
