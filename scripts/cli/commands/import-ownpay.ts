import { readFileSync } from 'node:fs';
import { UsageError, need } from '../args.ts';
import type { Commands } from '../command.ts';

/**
 * `import:ownpay`: unlike the other commands it does not call the admin API: it
 * opens the service's database itself (DATABASE_URL, or the embedded cluster in
 * the data directory: stop the service first then), because the import is one
 * transaction over the whole export. The work is server/domain/ownpay-import.
 */
export const importCommands: Commands = {
  'import:ownpay': {
    summary: "Import an OwnPay database export (brands, API key hashes, customers); a dry run unless --commit",
    usage: '--file <database.sql> [--commit] [--ownpay-key-env <VAR>]',
    options: { file: { type: 'string' }, commit: { type: 'boolean' }, 'ownpay-key-env': { type: 'string' } },
    notes: [
      "The file is OwnPay's backup `database.sql` (its Update/BackupService: mysqldump or its own dump) or any mysqldump of its database.",
      'Without --commit nothing is written: the report says what would be imported and what would be refused, and why.',
      "--ownpay-key-env names the environment variable holding OwnPay's ENCRYPTION_KEY (or APP_KEY), needed to read its customers; the key is never stored.",
      'Re-running imports nothing twice. Runs against the database of DATABASE_URL, else the embedded one in the data directory (stop the service first).',
      'Example: OWNPAY_KEY=… npm run cli -- import:ownpay --file backup/database.sql --ownpay-key-env OWNPAY_KEY',
    ],
    async run(_ctx, v) {
      const file = need(v, 'file');
      let dump: string;
      try {
        dump = readFileSync(file, 'utf8');
      } catch (err) {
        throw new UsageError(`--file: cannot read ${file}: ${(err as Error).message}`);
      }
      const keyVar = v['ownpay-key-env'] as string | undefined;
      const ownpayKey = keyVar ? process.env[keyVar] : undefined;
      if (keyVar && !ownpayKey) throw new UsageError(`--ownpay-key-env: ${keyVar} is not set`);

      const { loadConfig } = await import('../../../server/config.ts');
      const { createLogger } = await import('../../../server/infra/logger.ts');
      const { bootstrap } = await import('../../../server/bootstrap.ts');
      const { importOwnpayDump } = await import('../../../server/domain/ownpay-import/service.ts');
      const { AppError } = await import('../../../contract/common/errors.ts');
      const config = loadConfig({ ...process.env, ...(typeof v['data-dir'] === 'string' ? { DATA_DIR: v['data-dir'] } : {}) });
      // Migrations only: no job workers run while the import holds the database.
      const runtime = await bootstrap(config, createLogger({ level: 'warn' }), { startJobs: false });
      try {
        const report = await importOwnpayDump(runtime.deps.db, runtime.deps.crypto, dump, { dryRun: v.commit !== true, ownpayEncryptionKey: ownpayKey ?? null });
        const lines = [
          report.dry_run ? 'DRY RUN: nothing was written (add --commit to import).' : 'Imported, in one transaction.',
          `brands:    ${report.brands.created} new, ${report.brands.existing} already here`,
          `api keys:  ${report.api_keys.created} new, ${report.api_keys.existing} already here`,
          `customers: ${report.customers.created} new, ${report.customers.existing} already here`,
          `refused:   ${Object.entries(report.refused_counts).map(([t, n]) => `${t} ${n}`).join(', ') || 'none'}`,
          ...report.refused.map((r) => `  ${r.table} ${r.id ?? '?'}: ${r.reason}`),
        ];
        return { json: report, text: lines.join('\n') };
      } catch (err) {
        if (err instanceof AppError) throw new UsageError(err.message);
        throw err;
      } finally {
        await runtime.close();
      }
    },
  },
};
