import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AppError } from '../contract/common/errors.ts';
import { bootstrap, type Runtime } from '../server/bootstrap.ts';
import { ConfigError, loadConfig, type Config } from '../server/config.ts';
import { createPairingCode, DEFAULT_PAIRING_CODE_TTL_MINUTES } from '../server/domain/devices/pairing.ts';
import { createLogger } from '../server/infra/logger.ts';
import { loadSecrets } from '../server/infra/secrets.ts';

/**
 * `npm run cli -- <command> [options]`: operator commands over the same
 * services the API uses. A small dispatcher until the admin API and its client
 * exist; each command declares its options and runs against a started runtime
 * (database and job queue, no workers).
 */

interface Command {
  summary: string;
  usage: string;
  options: NonNullable<Parameters<typeof parseArgs>[0]>['options'];
  /** Checks the options (before anything starts) and returns the work to run. */
  prepare(values: Record<string, string | boolean | undefined>): (runtime: Runtime) => Promise<string>;
}

function positiveInt(values: Record<string, unknown>, name: string, fallback?: number): number {
  const raw = values[name];
  if (raw === undefined && fallback !== undefined) return fallback;
  if (typeof raw !== 'string' || !/^[0-9]{1,12}$/.test(raw) || Number(raw) < 1) throw new Error(`--${name} must be a positive whole number`);
  return Number(raw);
}

const commands: Record<string, Command> = {
  'pairing-code:create': {
    summary: 'Create a one-time pairing code for a brand (shown once).',
    usage: `--brand <id> [--ttl-minutes <n>]   (default ${DEFAULT_PAIRING_CODE_TTL_MINUTES} minutes)`,
    options: { brand: { type: 'string' }, 'ttl-minutes': { type: 'string' } },
    prepare(values) {
      const brandId = positiveInt(values, 'brand');
      const ttlMinutes = positiveInt(values, 'ttl-minutes', DEFAULT_PAIRING_CODE_TTL_MINUTES);
      return async (runtime) => {
        const { code, expiresAt } = await createPairingCode(runtime.deps.orm.em.fork(), brandId, { ttlMinutes });
        return [
          `Pairing code: ${code}`,
          `Brand:        ${brandId}`,
          `Expires at:   ${expiresAt.toISOString()}`,
          'Enter it in the companion app once; it cannot be shown again.',
        ].join('\n');
      };
    },
  },
};

/**
 * With the embedded default, a running `npm start` owns the cluster under
 * DATA_DIR; starting our own would stop it (bootstrap treats a live postmaster
 * as an orphan). So when one is running, connect to it instead.
 */
function runningEmbeddedDatabaseUrl(config: Config): string | null {
  if (config.DATABASE_URL) return null;
  const pidFile = path.resolve(config.DATA_DIR, 'pg', 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, but run as another user (the postgres user under root).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  const port = /^\d+$/.test(lines[3] ?? '') ? Number(lines[3]) : config.EMBEDDED_DB_PORT;
  const { secrets } = loadSecrets(config);
  return `postgres://postgres:${encodeURIComponent(secrets.embeddedDbPassword)}@127.0.0.1:${port}/paycollect`;
}

function help(): string {
  const lines = ['Usage: npm run cli -- <command> [options]', '', 'Commands:'];
  for (const [name, c] of Object.entries(commands)) lines.push(`  ${name} ${c.usage}`, `      ${c.summary}`);
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${help()}\n`);
    return name ? 0 : 64;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`Unknown command "${name}".\n\n${help()}\n`);
    return 64; // EX_USAGE
  }
  let work: (runtime: Runtime) => Promise<string>;
  try {
    const { values } = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false });
    work = command.prepare(values as Record<string, string | boolean | undefined>);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\nUsage: npm run cli -- ${name} ${command.usage}\n`);
    return 64;
  }

  let config: Config;
  try {
    config = loadConfig();
    const running = runningEmbeddedDatabaseUrl(config);
    if (running) config = loadConfig({ ...process.env, DATABASE_URL: running });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 78; // EX_CONFIG
    }
    throw err;
  }
  // Operational noise goes to stderr so stdout carries only the command's answer.
  const logger = createLogger({ level: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, destination: process.stderr });
  const runtime = await bootstrap(config, logger, { startJobs: false });
  try {
    process.stdout.write(`${await work(runtime)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      process.stderr.write(`${err.code}: ${err.message}${err.field ? ` (${err.field})` : ''}\n`);
      return 1;
    }
    throw err;
  } finally {
    await runtime.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
