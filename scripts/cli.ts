/**
 * `npm run cli -- <command> [options]`: every admin operation from a terminal,
 * over HTTP through the typed admin client (the same contract as the admin
 * panel). Talks to a running service; run `npm run cli -- --help`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConnectionError, PaycollectAdmin, PaycollectError } from '../clients/admin/index.ts';
import { UsageError, type Options, type Values } from './cli/args.ts';
import type { Command, Commands, Ctx } from './cli/command.ts';
import { brandCommands } from './cli/commands/brands.ts';
import { deviceCommands } from './cli/commands/devices.ts';
import { gatewayCommands } from './cli/commands/gateways.ts';
import { operationCommands } from './cli/commands/operations.ts';
import { paymentCommands } from './cli/commands/payments.ts';
import { paymentLinkCommands } from './cli/commands/payment-links.ts';
import { invoiceCommands } from './cli/commands/invoices.ts';
import { PaycollectMerchant } from '../clients/merchant/index.ts';
import { recoveryCommands } from './cli/commands/recovery.ts';
import { operatorCommands } from './cli/commands/operators.ts';
import { walletAccountCommands } from './cli/commands/wallet-accounts.ts';
import { customerCommands } from './cli/commands/customers.ts';
import { reconciliationCommands } from './cli/commands/reconciliation.ts';
import { importCommands } from './cli/commands/import-ownpay.ts';
import { listen } from './cli/listen.ts';
import { backupCommand, restoreCommand } from './cli/backup.ts';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** Exit codes: 0 done, 1 the API (or the network) refused, 64 bad usage, 78 no admin token. */
export const EXIT = { ok: 0, api: 1, usage: 64, config: 78 } as const;

const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

export const commands: Commands = { ...brandCommands, ...gatewayCommands, ...walletAccountCommands, ...customerCommands, ...deviceCommands, ...paymentCommands, ...paymentLinkCommands, ...invoiceCommands, ...operationCommands, ...recoveryCommands, ...reconciliationCommands, ...operatorCommands, ...importCommands };

const globalOptions: Options = {
  'base-url': { type: 'string' },
  'admin-token': { type: 'string' },
  actor: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

const globalHelp = `  --base-url <url>      The running service (default PAYCOLLECT_BASE_URL, else ${DEFAULT_BASE_URL})
  --admin-token <token> Admin token (default ADMIN_TOKEN, else adminToken in <data dir>/secrets.json)
  --data-dir <dir>      Where the service keeps secrets.json (default DATA_DIR, else .data)
  --actor <label>       Who you are, for the audit log (default ADMIN_ACTOR, else "cli")
  --json                Print the API's data as JSON (errors too, as {"error": ...})
  -h, --help            Help`;

class ConfigError extends Error {}

function mainHelp(): string {
  const width = Math.max(...Object.keys(commands).map((k) => k.length));
  return [
    'Usage: npm run cli -- <command> [options]',
    '',
    'Runs the service’s admin operations over its admin API.',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Options of every command:',
    globalHelp,
    '',
    'Run `npm run cli -- <command> --help` for a command’s own options.',
    '',
    'With a brand\'s API key instead of the admin token:',
    '  listen  Forward the brand\'s events, signed, to a local URL (like `stripe listen`); see `listen --help`',
    '',
    'On the machine of the embedded database, without the API:',
    '  backup   Back up the embedded database and secrets.json into one encrypted archive; see `backup --help`',
    '  restore  Restore such an archive into DATA_DIR; see `restore --help`',
  ].join('\n');
}

function commandHelp(name: string, c: Command): string {
  return [`Usage: npm run cli -- ${name} ${c.usage}`.trimEnd(), '', `${c.summary}.`, ...(c.notes?.length ? ['', ...c.notes] : []), '', 'Options of every command:', globalHelp].join('\n');
}

/** The admin token: flag, then environment, then the service's own secrets file. */
function resolveToken(v: Values, env: NodeJS.ProcessEnv): string {
  const given = (v['admin-token'] as string | undefined) ?? env.ADMIN_TOKEN;
  if (given) return given;
  const file = path.resolve((v['data-dir'] as string | undefined) ?? env.DATA_DIR ?? '.data', 'secrets.json');
  let stored: { adminToken?: unknown };
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as { adminToken?: unknown };
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : (err as Error).message;
    throw new ConfigError(`No admin token: give --admin-token or ADMIN_TOKEN (could not read ${file}: ${why})`);
  }
  if (typeof stored.adminToken !== 'string' || stored.adminToken === '') throw new ConfigError(`No admin token in ${file}: give --admin-token or ADMIN_TOKEN`);
  return stored.adminToken;
}

function describeError(err: PaycollectError, json: boolean, io: Io, baseUrl: string): void {
  const info = { code: err.code, message: err.message, status: err.status, request_id: err.requestId, errors: err.errors };
  if (json) {
    io.out(JSON.stringify({ error: info }, null, 2));
    return;
  }
  io.err(`error ${err.code}${err.status ? ` (HTTP ${err.status})` : ''}: ${err.message}${err.requestId ? ` [request ${err.requestId}]` : ''}`);
  for (const e of err.errors.filter((x) => x.field)) io.err(`  ${e.field}: ${e.message}`);
  if (err instanceof ConnectionError) io.err(`Is the service running at ${baseUrl}? (--base-url)`);
}

/** Runs one command line; returns the exit code. */
export async function run(argv: string[], io: Io = { out: (s) => console.log(s), err: (s) => console.error(s) }, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(mainHelp());
    return name ? EXIT.ok : EXIT.usage;
  }
  if (name === 'listen') {
    // Long-running and authenticated by a merchant key, so outside the admin commands.
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      return await listen(rest, io, env, stop.signal);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
  // Local operations on the data directory, not over the admin API.
  if (name === 'backup') return backupCommand(rest, io, env);
  if (name === 'restore') return restoreCommand(rest, io, env);
  const command = commands[name];
  if (!command) {
    io.err(`Unknown command "${name}".\n\n${mainHelp()}`);
    return EXIT.usage;
  }
  let values: Values;
  try {
    values = parseArgs({ args: rest, options: { ...globalOptions, ...command.options }, strict: true, allowPositionals: false }).values as Values;
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${commandHelp(name, command)}`);
    return EXIT.usage;
  }
  if (values.help) {
    io.out(commandHelp(name, command));
    return EXIT.ok;
  }
  const json = values.json === true;
  const baseUrl = (values['base-url'] as string | undefined) ?? env.PAYCOLLECT_BASE_URL ?? DEFAULT_BASE_URL;
  let client: PaycollectAdmin | undefined;
  const ctx: Ctx = {
    admin() {
      client ??= new PaycollectAdmin({
        baseUrl,
        adminToken: resolveToken(values, env),
        actor: (values.actor as string | undefined) ?? env.ADMIN_ACTOR ?? 'cli',
        timeoutMs: 30_000,
      });
      return client;
    },
    merchant(apiKey) {
      return new PaycollectMerchant({ baseUrl, apiKey, timeoutMs: 30_000 });
    },
  };
  try {
    const result = await command.run(ctx, values);
    io.out(json ? JSON.stringify(result.json, null, 2) : result.text);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message}\n\n${commandHelp(name, command)}`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      io.err(err.message);
      return EXIT.config;
    }
    if (err instanceof TypeError && /baseUrl/.test(err.message)) {
      io.err(`--base-url: ${err.message}`);
      return EXIT.usage;
    }
    if (!(err instanceof PaycollectError)) throw err;
    describeError(err, json, io, baseUrl);
    return EXIT.api;
  }
}

if (import.meta.main) {
  process.exitCode = await run(process.argv.slice(2));
}
