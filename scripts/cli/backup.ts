import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BackupError, backupEmbedded, restoreEmbedded } from '../../server/infra/backup/embedded-backup.ts';
import { migrationsList } from '../../server/infra/database/migrations/index.ts';

interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** Exit codes as the rest of the CLI: 0 done, 1 refused or failed, 64 bad usage. */
const EXIT = { ok: 0, failed: 1, usage: 64 } as const;

export const PASSPHRASE_VARIABLE = 'PAYCOLLECT_BACKUP_PASSPHRASE';
const MIN_PASSPHRASE = 12;

const common = `  --data-dir <dir>          The service's DATA_DIR (default DATA_DIR, else .data)
  --passphrase-file <file>  Read the passphrase from the file's first line
                            (else ${PASSPHRASE_VARIABLE}, else asked on the terminal)`;

export const backupHelp = `Usage: npm run cli -- backup --out <file> [--data-dir <dir>] [--passphrase-file <file>]

Backs up the embedded database and the secrets file (DATA_DIR/secrets.json) into one
archive encrypted with a passphrase. Works while the service runs. Run it as the user
that runs the service. Only for the embedded default: with DATABASE_URL, see the README
(Backups and restore).

  --out <file>              Where to write the archive (mode 0600)
${common}`;

export const restoreHelp = `Usage: npm run cli -- restore --in <file> [--data-dir <dir>] [--force] [--passphrase-file <file>]

Restores an archive made by \`backup\` into DATA_DIR: the embedded database and
secrets.json. Stop the service first. Refuses a wrong passphrase, an altered archive, an
archive from a newer version of the service, and a DATA_DIR that already holds an
installation unless --force (which keeps the old one aside, renamed).

  --in <file>               The archive
  --force                   Replace the installation in DATA_DIR
${common}`;

/** Asks on the terminal without echoing what is typed. */
function ask(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    if (!stdin.isTTY) return reject(new BackupError(`no passphrase: give --passphrase-file or ${PASSPHRASE_VARIABLE} (no terminal to ask on)`));
    process.stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    let value = '';
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          finish();
          return resolve(value);
        }
        if (ch === '\u0003') {
          finish();
          return reject(new BackupError('cancelled'));
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    stdin.on('data', onData);
  });
}

async function passphrase(file: string | undefined, env: NodeJS.ProcessEnv, confirm: boolean): Promise<string> {
  let value: string;
  if (file) value = readFileSync(file, 'utf8').split(/\r?\n/)[0] ?? '';
  else if (env[PASSPHRASE_VARIABLE]) value = env[PASSPHRASE_VARIABLE]!;
  else {
    value = await ask('Backup passphrase: ');
    if (confirm && (await ask('Again: ')) !== value) throw new BackupError('the passphrases differ');
  }
  if (confirm && value.length < MIN_PASSPHRASE) throw new BackupError(`the passphrase must have at least ${MIN_PASSPHRASE} characters`);
  if (!value) throw new BackupError('empty passphrase');
  return value;
}

function parse(argv: string[], options: Record<string, { type: 'string' | 'boolean' }>, help: string, io: Io): Record<string, string | boolean | undefined> | number {
  try {
    const { values } = parseArgs({ args: argv, options: { ...options, 'data-dir': { type: 'string' }, 'passphrase-file': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false });
    if (values.help) {
      io.out(help);
      return EXIT.ok;
    }
    return values as Record<string, string | boolean | undefined>;
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${help}`);
    return EXIT.usage;
  }
}

function refuseExternalDatabase(env: NodeJS.ProcessEnv, io: Io): boolean {
  if (!env.DATABASE_URL) return false;
  io.err('DATABASE_URL is set: this command backs up the embedded database only. Back up your PostgreSQL with pg_dump (or WAL archiving) and keep your secrets yourself: README, Backups and restore.');
  return true;
}

const dataDirOf = (v: Record<string, unknown>, env: NodeJS.ProcessEnv) => path.resolve((v['data-dir'] as string | undefined) ?? env.DATA_DIR ?? '.data');

async function guarded(io: Io, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BackupError) {
      io.err(`error: ${err.message}`);
      return EXIT.failed;
    }
    throw err;
  }
}

export async function backupCommand(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  const v = parse(argv, { out: { type: 'string' } }, backupHelp, io);
  if (typeof v === 'number') return v;
  if (typeof v.out !== 'string' || !v.out) {
    io.err(`--out is required\n\n${backupHelp}`);
    return EXIT.usage;
  }
  if (refuseExternalDatabase(env, io)) return EXIT.failed;
  const out = v.out;
  return guarded(io, async () => {
    const pass = await passphrase(v['passphrase-file'] as string | undefined, env, true);
    const m = await backupEmbedded({ dataDir: dataDirOf(v, env), out, passphrase: pass, env });
    const rows = Object.values(m.row_counts).reduce((a, b) => a + b, 0);
    io.out(`backup written: ${path.resolve(out)}\n  migration level ${m.migration_level ?? '(none)'}, ${Object.keys(m.row_counts).length} tables, ${rows} rows, PostgreSQL ${m.server_version_num}`);
    if (m.secrets_from_environment.length) {
      io.err(`warning: ${m.secrets_from_environment.join(', ')} come from the environment, not secrets.json, so they are not in the archive: keep them with it`);
    }
    return EXIT.ok;
  });
}

export async function restoreCommand(argv: string[], io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  const v = parse(argv, { in: { type: 'string' }, force: { type: 'boolean' } }, restoreHelp, io);
  if (typeof v === 'number') return v;
  if (typeof v.in !== 'string' || !v.in) {
    io.err(`--in is required\n\n${restoreHelp}`);
    return EXIT.usage;
  }
  if (refuseExternalDatabase(env, io)) return EXIT.failed;
  const input = v.in;
  return guarded(io, async () => {
    const pass = await passphrase(v['passphrase-file'] as string | undefined, env, false);
    const r = await restoreEmbedded({ dataDir: dataDirOf(v, env), input, passphrase: pass, force: v.force === true, knownMigrations: migrationsList.map((m) => m.name) });
    const differ = Object.keys({ ...r.manifest.row_counts, ...r.row_counts }).filter((t) => r.manifest.row_counts[t] !== r.row_counts[t]);
    io.out(
      [
        `restored into ${dataDirOf(v, env)}: backup of ${r.manifest.created_at}, migration level ${r.manifest.migration_level ?? '(none)'}`,
        ...(differ.length ? [`  rows written while the backup ran: ${differ.map((t) => `${t} ${r.manifest.row_counts[t] ?? 0} -> ${r.row_counts[t] ?? 0}`).join(', ')}`] : ['  every table holds the rows the manifest counted']),
        ...(r.replaced.pg ? [`  the replaced database was kept at ${r.replaced.pg}`] : []),
        ...(r.replaced.secrets ? [`  the replaced secrets were kept at ${r.replaced.secrets}`] : []),
        ...(r.manifest.secrets_from_environment.length ? [`  set ${r.manifest.secrets_from_environment.join(', ')} as the backed-up installation had them (they are not in the archive)`] : []),
        'Start the service (npm start): it applies any newer migrations.',
      ].join('\n'),
    );
    return EXIT.ok;
  });
}
