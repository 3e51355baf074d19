import { invoiceStatuses, modes } from '../../../contract/vocabulary.ts';
import { defined, need, oneOf, opt, pageHelp, pageOptions, pageQuery, positiveInt } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const INVOICE_COLUMNS = ['id', 'brand_id', 'mode', 'number', 'status', 'total', 'amount_paid', 'currency', 'due_date', 'created_at'];

/** Invoices of every brand, as operators see them in the console (admin API; merchants use the merchant API). */
export const invoiceCommands: Commands = {
  'invoices:list': {
    summary: 'List invoices of every brand, or one, newest first',
    usage: `[--brand <id>] [--mode live|test] [--status ${invoiceStatuses.join('|')}] [--customer <uuid>] ${pageHelp}`,
    options: { brand: { type: 'string' }, mode: { type: 'string' }, status: { type: 'string' }, customer: { type: 'string' }, ...pageOptions },
    async run(ctx, v) {
      const query = defined({
        brand_id: positiveInt(v, 'brand'),
        mode: oneOf(v, 'mode', modes),
        status: oneOf(v, 'status', invoiceStatuses),
        customer_id: opt(v, 'customer'),
        ...pageQuery(v),
      });
      const page = await ctx.admin().invoices.list(query);
      return { json: page, text: table(page.data, INVOICE_COLUMNS, page.meta) };
    },
  },
  'invoices:void': {
    summary: 'Void an invoice (it can no longer be paid; invoice.voided is sent; audited)',
    usage: '--invoice <uuid>',
    options: { invoice: { type: 'string' } },
    async run(ctx, v) {
      const { payments, lines, ...invoice } = await ctx.admin().invoices.void(need(v, 'invoice'));
      return { json: { ...invoice, lines, payments }, text: block(invoice) };
    },
  },
};
