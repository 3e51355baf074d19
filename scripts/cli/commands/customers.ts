import { readFileSync, writeFileSync } from 'node:fs';
import { UsageError, need, oneOf, pageHelp, pageOptions, pageQuery, positiveInt, defined, type Values } from '../args.ts';
import type { Commands } from '../command.ts';
import { table } from '../output.ts';

const MODES = ['live', 'test'] as const;
const mode = (v: Values) => oneOf(v, 'mode', MODES) ?? 'live';

export const customerCommands: Commands = {
  'customers:list': {
    summary: "List a brand's customers of a mode, newest first, email and phone masked",
    usage: `--brand <id> [--mode live|test] ${pageHelp}`,
    options: { brand: { type: 'string' }, mode: { type: 'string' }, ...pageOptions },
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const page = await ctx.admin().customers.list(brand, defined({ mode: mode(v), ...pageQuery(v) }));
      const rows = page.data;
      return { json: page, text: rows.length ? table(rows, ['id', 'uuid', 'name', 'email_masked', 'phone_masked', 'created_at'], page.meta) : 'No customer in this mode.' };
    },
  },
  'customers:import': {
    summary: 'Import customers from a CSV file (name,email,phone); a check only unless --commit',
    usage: '--brand <id> --file <customers.csv> [--mode live|test] [--commit]',
    options: { brand: { type: 'string' }, file: { type: 'string' }, mode: { type: 'string' }, commit: { type: 'boolean' } },
    notes: [
      'The header names some of name, email, phone (an export\'s id, uuid and created_at are passed over); at most 1000 rows and 90 KiB per import.',
      'Without --commit nothing is written: the report lists every refused row with its line and reason. With --commit the valid rows are imported in one transaction and the refused ones reported; running the same file again imports nothing twice.',
      'Example: npm run cli -- customers:import --brand 1 --file customers.csv --commit',
    ],
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const file = need(v, 'file');
      let csv: string;
      try {
        csv = readFileSync(file, 'utf8');
      } catch (err) {
        throw new UsageError(`--file: cannot read ${file}: ${(err as Error).message}`);
      }
      const report = await ctx.admin().customers.import(brand, { mode: mode(v), csv, dry_run: v.commit !== true });
      const lines = [
        report.dry_run ? 'CHECK ONLY: nothing was written (add --commit to import).' : 'Imported, in one transaction.',
        `rows:     ${report.total_rows}`,
        `${report.dry_run ? 'valid:   ' : 'imported:'} ${report.accepted}`,
        `refused:  ${report.refused.length}`,
        ...report.refused.map((r) => `  line ${r.line}: ${r.reason} (${r.message})`),
      ];
      return { json: report, text: lines.join('\n') };
    },
  },
  'customers:export': {
    summary: "Export a brand's customers of a mode as CSV, personal data in clear (owners; recorded in the audit log)",
    usage: '--brand <id> [--mode live|test] [--out <file.csv>]',
    options: { brand: { type: 'string' }, mode: { type: 'string' }, out: { type: 'string' } },
    notes: [
      'Columns id,uuid,name,email,phone,created_at; a cell starting with = + - @ is written with a leading \' so spreadsheets do not run it (an import strips it again).',
      'Without --out the CSV goes to standard output. The file is created readable by you only: it holds personal data.',
    ],
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const out = v.out as string | undefined;
      const e = await ctx.admin().customers.export(brand, { mode: mode(v) });
      if (out) {
        writeFileSync(out, e.csv, { mode: 0o600 });
        return { json: { file: out, count: e.count }, text: `wrote ${e.count} customers to ${out}` };
      }
      return { json: e, text: e.csv.trimEnd() };
    },
  },
};
