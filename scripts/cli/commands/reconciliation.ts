import { readFile } from 'node:fs/promises';
import { modes } from '../../../contract/vocabulary.ts';
import { UsageError, defined, need, oneOf, positiveInt } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const FINDING_COLUMNS = ['category', 'trx_id', 'line', 'occurred_at', 'statement_amount', 'statement_fee', 'sms_amount', 'sms_fee', 'transaction_id', 'transaction_status', 'hint_transaction_ids'];

interface Report {
  upload: Record<string, unknown> & { counts: Record<string, number> };
  items: Array<Record<string, unknown>>;
}

/** The counts, then the findings a person acts on (matched ones are in the JSON and the CSV). */
function reportText(r: Report): string {
  const open = r.items.filter((i) => i.category !== 'matched');
  const head = block({ ...r.upload, counts: Object.entries(r.upload.counts).map(([k, n]) => `${k} ${n}`).join(', ') }, ['id', 'wallet_account_id', 'account_number', 'day', 'mode', 'format', 'row_count', 'counts']);
  return `${head}\n\n${open.length ? table(open, FINDING_COLUMNS) : 'Every incoming row of the day matches an SMS or a completed payment.'}`;
}

/** Statement reconciliation (docs/reconciliation.md). */
export const reconciliationCommands: Commands = {
  reconcile: {
    summary: "Upload a wallet account's statement export (CSV or text) and reconcile one day against its SMS and payments",
    usage: '--account <wallet account id> --day YYYY-MM-DD --file <statement.csv> [--mode live|test]',
    options: { account: { type: 'string' }, day: { type: 'string' }, file: { type: 'string' }, mode: { type: 'string' } },
    notes: [
      'Reads a bKash statement, a Nagad statement or the generic layout (date_time, trx_id, direction, counterparty, amount, fee, balance); the day is Asia/Dhaka.',
      'Nothing is completed: a statement_only finding is verified by a person (payments:verify or the console), an sms_only one is flagged.',
      'Example: reconcile --account 3 --day 2026-05-26 --file ~/Downloads/statement.csv',
    ],
    async run(ctx, v) {
      const path = need(v, 'file');
      let content: string;
      try {
        content = await readFile(path, 'utf8');
      } catch (err) {
        throw new UsageError(`--file ${path} cannot be read: ${(err as Error).message}`);
      }
      const report = (await ctx.admin().reconciliation.upload(positiveInt(v, 'account', true), defined({
        day: need(v, 'day'),
        mode: oneOf(v, 'mode', modes),
        file_name: path.split(/[\\/]/).pop()!.slice(0, 200),
        content,
      }))) as unknown as Report;
      return { json: report, text: reportText(report) };
    },
  },
  'reconcile:report': {
    summary: 'Show a reconciliation report (--json for every finding; the CSV is GET /api/admin/v1/statements/{id}/report.csv or the console)',
    usage: '--id <report id>',
    options: { id: { type: 'string' } },
    async run(ctx, v) {
      const id = positiveInt(v, 'id', true);
      const report = (await ctx.admin().reconciliation.get(id)) as unknown as Report;
      return { json: report, text: reportText(report) };
    },
  },
};
