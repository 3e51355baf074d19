import { html, type SafeHtml } from './html.ts';

export const ASSETS_PATH = '/checkout/assets';

/** The page shell: styles and the one script come from our own origin only (see the CSP in routes.ts). */
export function layout(opts: { title: string; body: SafeHtml; script?: boolean; lang?: string }): string {
  return html`<!doctype html>
<html lang="${opts.lang ?? 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light">
<title>${opts.title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSETS_PATH}/checkout.css">
${opts.script ? html`<script src="${ASSETS_PATH}/checkout.js" defer></script>` : null}
</head>
<body>
${opts.body}
</body>
</html>
`.text;
}

export function messagePage(opts: { title: string; heading: string; text: string; requestId?: string }): string {
  return layout({
    title: opts.title,
    body: html`<main class="sheet">
  <section class="status">
    <div class="status-icon warn" aria-hidden="true">!</div>
    <h1 class="status-title">${opts.heading}</h1>
    <p>${opts.text}</p>
    ${opts.requestId ? html`<p class="fine">Request ${opts.requestId}</p>` : null}
  </section>
</main>`,
  });
}

export function notFoundPage(): string {
  return messagePage({
    title: 'Payment not found',
    heading: 'Payment not found',
    text: 'This payment link is not valid. Check the link you were given, or ask the shop for a new one.',
  });
}

/** A disabled brand's checkout and sandbox pages: nothing can be paid, and nothing says more about the merchant. */
export function brandDisabledPage(): string {
  return messagePage({
    title: 'Payments unavailable',
    heading: 'This merchant cannot take payments right now',
    text: 'Nothing has been charged on this page. Please contact the shop that sent you this link.',
  });
}

export function errorPage(requestId: string): string {
  return messagePage({
    title: 'Something went wrong',
    heading: 'Something went wrong',
    text: 'We could not load this page. Please try again in a moment.',
    requestId,
  });
}

/** A refusal by the rate limiter (429): the page says when to come back; `Retry-After` says it to machines. */
export function tooManyRequestsPage(retryAfterSeconds: string | undefined): string {
  return messagePage({
    title: 'Too many requests',
    heading: 'Too many requests',
    text: `Too many requests came from your connection. Please try again${retryAfterSeconds ? ` in ${retryAfterSeconds} seconds` : ' in a moment'}.`,
  });
}
