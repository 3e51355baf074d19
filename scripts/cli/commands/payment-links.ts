import { UsageError, defined, need, opt, pageHelp, pageOptions, pageQuery, type Values } from '../args.ts';
import type { Commands, Ctx } from '../command.ts';
import { block, table } from '../output.ts';

const LINK_COLUMNS = ['id', 'status', 'amount', 'min_amount', 'max_amount', 'currency', 'single_use', 'expires_at', 'payments_created', 'url'];

/** Payment links belong to a brand and mode: the merchant API key says which (flag, else PAYCOLLECT_API_KEY). */
function merchant(ctx: Ctx, v: Values) {
  const key = opt(v, 'api-key') ?? process.env.PAYCOLLECT_API_KEY;
  if (!key) throw new UsageError('--api-key (or PAYCOLLECT_API_KEY) is required: the brand API key (sk_live_/sk_test_) the link belongs to');
  return ctx.merchant(key);
}

const keyOption = { 'api-key': { type: 'string' as const } };

export const paymentLinkCommands: Commands = {
  'payment-links:create': {
    summary: 'Create a payment link (fixed or customer-entered amount) and print its URL and QR code URLs',
    usage: `--api-key <sk_...> --currency <C> (--amount 500.00 | [--min-amount 100.00] [--max-amount 5000.00])
      [--single-use] [--expires-at <ISO time>] [--reference <text>] [--description <text>] [--success-url <url>] [--cancel-url <url>]`,
    options: {
      ...keyOption,
      currency: { type: 'string' },
      amount: { type: 'string' },
      'min-amount': { type: 'string' },
      'max-amount': { type: 'string' },
      'single-use': { type: 'boolean' },
      'expires-at': { type: 'string' },
      reference: { type: 'string' },
      description: { type: 'string' },
      'success-url': { type: 'string' },
      'cancel-url': { type: 'string' },
    },
    notes: ['Without --amount the customer enters the amount on the link page, within --min-amount and --max-amount.'],
    async run(ctx, v) {
      const link = await merchant(ctx, v).paymentLinks.create(
        defined({
          currency: need(v, 'currency'),
          amount: opt(v, 'amount'),
          min_amount: opt(v, 'min-amount'),
          max_amount: opt(v, 'max-amount'),
          single_use: v['single-use'] === true ? true : undefined,
          expires_at: opt(v, 'expires-at'),
          reference: opt(v, 'reference'),
          description: opt(v, 'description'),
          success_url: opt(v, 'success-url'),
          cancel_url: opt(v, 'cancel-url'),
        }),
      );
      const { lastResponse: _meta, ...shown } = link;
      return { json: shown, text: block(shown) };
    },
  },
  'payment-links:list': {
    summary: "List the brand's payment links, newest first",
    usage: `--api-key <sk_...> ${pageHelp}`,
    options: { ...keyOption, ...pageOptions },
    async run(ctx, v) {
      const page = await merchant(ctx, v).paymentLinks.list(pageQuery(v));
      const rows = page.data.map((l) => ({ ...l }));
      return { json: { data: rows, meta: page.meta }, text: table(rows, LINK_COLUMNS, page.meta) };
    },
  },
  'payment-links:deactivate': {
    summary: 'Deactivate a payment link (it stops creating payments)',
    usage: '--api-key <sk_...> --link <plink_...>',
    options: { ...keyOption, link: { type: 'string' } },
    async run(ctx, v) {
      const { lastResponse: _meta, ...shown } = await merchant(ctx, v).paymentLinks.deactivate(need(v, 'link'));
      return { json: shown, text: block(shown) };
    },
  },
};
