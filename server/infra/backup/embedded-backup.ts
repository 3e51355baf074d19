import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, closeSync, createReadStream, createWriteStream, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import pg from 'pg';
import { processAlive, readPid, runAsIds, startEmbeddedPostgres } from '../database/embedded.ts';
import { freePort } from '../database/local-server.ts';
import type { Logger } from '../logger.ts';
import { ArchiveError, decryptingStream, encryptingStream, type KdfParams } from './archive.ts';
import { ByteReader, readRecordHead, recordHeader, sha256 } from './records.ts';

/**
 * Backup and restore of the embedded default: a physical copy of the data
 * directory's cluster taken with PostgreSQL's low-level backup API
 * (pg_backup_start / pg_backup_stop, "Making a Non-Exclusive Low-Level
 * Backup", PostgreSQL 18 manual section 25.3.4), with the WAL that makes it
 * consistent and the secrets file, in one passphrase-encrypted archive
 * (archive.ts, records.ts).
 *
 * Why not pg_dump: the embedded package ships only initdb, pg_ctl and postgres,
 * and a pg_dump older than the server refuses to dump it. A physical copy
 * needs no other binary, restores byte for byte (roles, the audit log's owner
 * and guard, pg-boss's queue, sequences, everything), and is taken from the
 * running service. It binds the archive to PostgreSQL's major version: it is
 * restored by the same major version of the embedded binaries (README).
 */

export const BACKUP_FORMAT = 1;
const DATABASE = 'paycollect';

export interface BackupManifest {
  format: number;
  /** The service's version (package.json) that made the backup. */
  service_version: string;
  created_at: string;
  /** The cluster's server_version_num (a restore needs the same major version). */
  server_version_num: number;
  /** Applied migrations, oldest first; the last is the migration level. */
  migrations: string[];
  migration_level: string | null;
  /**
   * Rows per table of the application database, counted as the copy started.
   * UNLOGGED tables (the rate-limit counters) are left out: PostgreSQL keeps no
   * WAL for them and empties them on recovery, so a restore starts them empty.
   */
  row_counts: Record<string, number>;
  /** Secrets that the backed-up installation took from its environment: they are not in secrets.json, so not in the archive. */
  secrets_from_environment: string[];
}

export interface BackupTrailer {
  files: Record<string, { size: number; sha256: string }>;
}

export class BackupError extends Error {}

const SERVICE_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Names of configuration variables that override secrets.json (secrets.ts). */
const SECRET_VARIABLES = ['ADMIN_TOKEN', 'JWT_ACCESS_SECRET', 'JWT_REFRESH_SECRET', 'BLIND_INDEX_KEY', 'PII_ENCRYPTION_KEYS', 'SANDBOX_CALLBACK_SECRET'];

/** Directories whose contents a base backup leaves out, as pg_basebackup does (src/backend/backup/basebackup.c). */
const EXCLUDED_CONTENTS = new Set(['pg_stat_tmp', 'pg_replslot', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans', 'pg_wal']);
const EXCLUDED_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'pg_internal.init', 'backup_label', 'backup_label.old', 'tablespace_map', 'postgresql.auto.conf.tmp', 'current_logfiles']);

function readSecretsFile(dataDir: string): { text: string; password: string } {
  const file = path.join(dataDir, 'secrets.json');
  if (!existsSync(file)) throw new BackupError(`no secrets file at ${file}: is ${dataDir} the service's DATA_DIR?`);
  const text = readFileSync(file, 'utf8');
  const parsed = JSON.parse(text) as { embeddedDbPassword?: unknown };
  if (typeof parsed.embeddedDbPassword !== 'string') throw new BackupError(`${file} has no embedded database password`);
  return { text, password: parsed.embeddedDbPassword };
}

async function rowCounts(c: pg.ClientBase): Promise<Record<string, number>> {
  const { rows } = await c.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relpersistence = 'p' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
      ORDER BY 1`,
  );
  const out: Record<string, number> = {};
  for (const { name } of rows) out[name] = Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`)).rows[0]!.n);
  return out;
}

async function appliedMigrations(c: pg.ClientBase): Promise<string[]> {
  const exists = (await c.query("SELECT to_regclass('public.schema_migrations') AS t")).rows[0].t;
  if (!exists) return [];
  return (await c.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id')).rows.map((r) => r.name);
}

/** Every file and directory of the cluster the backup carries, parents first. */
function* walk(root: string, rel = ''): Generator<{ rel: string; abs: string; dir: boolean; mode: number }> {
  const abs = path.join(root, rel);
  let entries: string[];
  try {
    entries = readdirSync(abs).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const name of entries) {
    const childRel = rel ? `${rel}/${name}` : name;
    const childAbs = path.join(root, childRel);
    let st;
    try {
      st = lstatSync(childAbs);
    } catch (err) {
      // Files come and go while the server runs (temporary files, dropped tables): the WAL replays what matters.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    if (EXCLUDED_FILES.has(name) || name.startsWith('pgsql_tmp')) continue;
    if (st.isDirectory()) {
      yield { rel: childRel, abs: childAbs, dir: true, mode: st.mode };
      if (!EXCLUDED_CONTENTS.has(childRel)) yield* walk(root, childRel);
    } else if (st.isFile()) {
      yield { rel: childRel, abs: childAbs, dir: false, mode: st.mode };
    } else if (st.isSymbolicLink()) {
      throw new BackupError(`${childAbs} is a symbolic link (a tablespace or a moved directory): this backup copies plain data directories only`);
    }
  }
}

/**
 * A file as it is now: its length read once, then that many bytes. A file the
 * server truncates meanwhile is padded with zeros, one it extends is cut: both
 * are made right by replaying the WAL (what pg_basebackup does too).
 */
async function* fileRecord(name: string, abs: string, mode: number, trailer: BackupTrailer): AsyncGenerator<Buffer> {
  let fd: number;
  try {
    fd = openSync(abs, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    const size = lstatSync(abs).size;
    const hash = sha256();
    yield recordHeader('F', name, mode, size);
    let done = 0;
    while (done < size) {
      const want = Math.min(1 << 20, size - done);
      const buf = Buffer.alloc(want);
      const got = readSync(fd, buf, 0, want, done);
      // Past the file's end now: the rest stays zeros.
      const piece = got === 0 ? buf : buf.subarray(0, got);
      hash.update(piece);
      yield piece;
      done += piece.length;
    }
    trailer.files[name] = { size, sha256: hash.digest('hex') };
  } finally {
    closeSync(fd);
  }
}

function bytesRecord(name: string, mode: number, data: Buffer, trailer: BackupTrailer): Buffer[] {
  trailer.files[name] = { size: data.length, sha256: sha256().update(data).digest('hex') };
  return [recordHeader('F', name, mode, data.length), data];
}

/**
 * The cluster of a running service is used as it is (never stopped or
 * restarted: the service goes on serving); a stopped one is started for the
 * time of the backup.
 */
async function attachOrStart(dataDir: string, password: string, logger?: Logger): Promise<{ url: string; stop(): Promise<void> }> {
  const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
  const pid = readPid(pidFile);
  if (pid !== null && processAlive(pid)) {
    // postmaster.pid's fourth line is the port the cluster listens on.
    const port = Number(readFileSync(pidFile, 'utf8').split('\n')[3]);
    if (!Number.isInteger(port) || port <= 0) throw new BackupError(`cannot tell the running cluster's port from ${pidFile}`);
    return { url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`, stop: async () => undefined };
  }
  return startEmbeddedPostgres({ dataDir, port: await freePort(), password, database: DATABASE, ...(logger ? { logger } : {}) });
}

export interface BackupOptions {
  /** The service's DATA_DIR (secrets.json and the cluster in pg/). */
  dataDir: string;
  out: string;
  passphrase: string;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  kdf?: KdfParams;
}

/**
 * Writes the archive to `out` (mode 0600; written beside it and renamed into
 * place when complete). Shares the service's running cluster, or starts the
 * cluster for the time of the backup when the service is stopped.
 */
export async function backupEmbedded(opts: BackupOptions): Promise<BackupManifest> {
  const dataDir = path.resolve(opts.dataDir);
  const pgdata = path.join(dataDir, 'pg');
  if (!existsSync(path.join(pgdata, 'PG_VERSION'))) throw new BackupError(`no embedded database in ${dataDir} (no pg/PG_VERSION): is it the service's DATA_DIR?`);
  const secrets = readSecretsFile(dataDir);
  const env = opts.env ?? process.env;
  // An earlier backup is never replaced by accident.
  if (existsSync(path.resolve(opts.out))) throw new BackupError(`${path.resolve(opts.out)} exists: give another file name`);
  const cluster = await attachOrStart(dataDir, secrets.password, opts.logger);
  const client = new pg.Client({ connectionString: cluster.url });
  const out = path.resolve(opts.out);
  const partial = path.join(path.dirname(out), `.${path.basename(out)}.${randomBytes(6).toString('hex')}.partial`);
  try {
    await client.connect();
    const version = Number((await client.query('SHOW server_version_num')).rows[0].server_version_num);
    const migrations = await appliedMigrations(client);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      service_version: SERVICE_VERSION,
      created_at: new Date().toISOString(),
      server_version_num: version,
      migrations,
      migration_level: migrations.at(-1) ?? null,
      row_counts: await rowCounts(client),
      secrets_from_environment: SECRET_VARIABLES.filter((k) => env[k]),
    };
    // A temporary slot holds the WAL from here on until this session ends, so no segment the copy needs is recycled meanwhile.
    const slot = `paycollect_backup_${process.pid}_${randomBytes(4).toString('hex')}`;
    await client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [slot]);
    const start = (await client.query<{ lsn: string; wal: string }>("SELECT lsn::text, pg_walfile_name(lsn) AS wal FROM pg_backup_start($1, true) AS lsn", [`paycollect backup ${manifest.created_at}`])).rows[0]!;
    const trailer: BackupTrailer = { files: {} };

    async function* records(): AsyncGenerator<Buffer> {
      const manifestBytes = Buffer.from(JSON.stringify(manifest));
      yield recordHeader('M', 'manifest.json', 0o600, manifestBytes.length);
      yield manifestBytes;
      yield* bytesRecord('secrets.json', 0o600, Buffer.from(secrets.text), trailer);
      for (const entry of walk(pgdata)) {
        if (entry.dir) {
          yield recordHeader('D', `pg/${entry.rel}`, entry.mode, 0);
          continue;
        }
        yield* fileRecord(`pg/${entry.rel}`, entry.abs, entry.mode, trailer);
      }
      const stop = (await client.query<{ labelfile: string; spcmapfile: string; wal: string }>('SELECT labelfile, spcmapfile, pg_walfile_name(lsn) AS wal FROM pg_backup_stop(true)')).rows[0]!;
      yield* bytesRecord('pg/backup_label', 0o600, Buffer.from(stop.labelfile), trailer);
      if (stop.spcmapfile) yield* bytesRecord('pg/tablespace_map', 0o600, Buffer.from(stop.spcmapfile), trailer);
      // The WAL from the backup's start to its end (segment names sort in WAL order on one timeline), and the timeline history.
      const timeline = start.wal.slice(0, 8);
      const wal = readdirSync(path.join(pgdata, 'pg_wal')).filter((f) => (/^[0-9A-F]{24}$/.test(f) && f.startsWith(timeline) && f >= start.wal && f <= stop.wal) || /^[0-9A-F]{8}\.history$/.test(f));
      if (!wal.includes(start.wal) || !wal.includes(stop.wal)) throw new BackupError(`WAL segments ${start.wal}..${stop.wal} are not all in pg_wal`);
      for (const f of wal.sort()) {
        yield* fileRecord(`pg/pg_wal/${f}`, path.join(pgdata, 'pg_wal', f), 0o600, trailer);
      }
      const trailerBytes = Buffer.from(JSON.stringify(trailer));
      yield recordHeader('T', 'trailer.json', 0o600, trailerBytes.length);
      yield trailerBytes;
    }

    mkdirSync(path.dirname(out), { recursive: true });
    const file = createWriteStream(partial, { flags: 'wx', mode: 0o600 });
    await pipeline(Readable.from(records()), createGzip({ level: 6 }), await encryptingStream(opts.passphrase, opts.kdf), file);
    const fd = openSync(partial, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(partial, out);
    await client.query('SELECT pg_drop_replication_slot($1)', [slot]).catch(() => undefined);
    return manifest;
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    // Ending the session also ends a backup still in progress and drops the temporary slot.
    await client.end().catch(() => undefined);
    await cluster.stop();
  }
}

export interface RestoreOptions {
  dataDir: string;
  input: string;
  passphrase: string;
  /** Replace an existing installation in dataDir (kept aside, renamed, not deleted). */
  force?: boolean;
  /** The migrations this code knows; an archive with another is from a newer version. */
  knownMigrations: readonly string[];
  logger?: Logger;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Rows per table counted in the restored database. */
  row_counts: Record<string, number>;
  /** Where the replaced installation was moved, when --force replaced one. */
  replaced: { pg?: string; secrets?: string };
}

function checkManifest(m: BackupManifest, known: readonly string[]): void {
  if (m.format !== BACKUP_FORMAT) throw new BackupError(`backup format ${m.format} is not supported by this version (expects ${BACKUP_FORMAT})`);
  const unknown = m.migrations.filter((name) => !known.includes(name));
  if (unknown.length) {
    throw new BackupError(`the backup's migration level (${m.migration_level}) is newer than this code's (${known.at(-1)}): unknown migrations ${unknown.join(', ')}. Restore it with the version of the service that made it, or a newer one.`);
  }
}

async function extract(input: string, passphrase: string, staging: string, known: readonly string[]): Promise<BackupManifest> {
  let manifest: BackupManifest | null = null;
  let trailer: BackupTrailer | null = null;
  const written: Record<string, { size: number; sha256: string }> = {};
  const dirModes: Array<[string, number]> = [];
  await pipeline(createReadStream(input), decryptingStream(passphrase), createGunzip(), async (source: AsyncIterable<Buffer>) => {
    const r = new ByteReader(source);
    const first = await readRecordHead(r);
    if (first.kind !== 'M') throw new BackupError('the archive does not start with its manifest');
    manifest = JSON.parse((await r.read(first.size)).toString('utf8')) as BackupManifest;
    checkManifest(manifest, known);
    while (!(await r.atEnd())) {
      const head = await readRecordHead(r);
      if (trailer) throw new BackupError('records after the archive trailer');
      if (head.kind === 'T') {
        trailer = JSON.parse((await r.read(head.size)).toString('utf8')) as BackupTrailer;
        continue;
      }
      const rel = path.posix.normalize(head.name);
      if (rel.startsWith('..') || path.posix.isAbsolute(rel) || !(rel === 'secrets.json' || rel.startsWith('pg/'))) throw new BackupError(`unexpected path in archive: ${head.name}`);
      const target = path.join(staging, ...rel.split('/'));
      if (head.kind === 'D') {
        mkdirSync(target, { recursive: true, mode: 0o700 });
        dirModes.push([target, head.mode]);
        continue;
      }
      if (head.kind !== 'F') throw new BackupError(`unexpected record ${head.kind} in archive`);
      mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      const fd = openSync(target, 'wx', 0o600);
      const hash = sha256();
      try {
        for await (const piece of r.take(head.size)) {
          hash.update(piece);
          writeSync(fd, piece);
        }
      } finally {
        closeSync(fd);
      }
      chmodSync(target, head.mode & 0o700);
      written[rel] = { size: head.size, sha256: hash.digest('hex') };
    }
  });
  if (!manifest) throw new BackupError('the archive has no manifest');
  const t = trailer as BackupTrailer | null;
  if (!t) throw new BackupError('the archive has no trailer (cut off?)');
  const names = new Set([...Object.keys(t.files), ...Object.keys(written)]);
  for (const name of names) {
    const want = t.files[name];
    const got = written[name];
    if (!want || !got || want.size !== got.size || want.sha256 !== got.sha256) throw new BackupError(`checksum mismatch for ${name}`);
  }
  for (const required of ['secrets.json', 'pg/PG_VERSION', 'pg/backup_label', 'pg/global/pg_control']) {
    if (!written[required]) throw new BackupError(`the archive lacks ${required}`);
  }
  // Directories get their own modes (PostgreSQL insists on 0700 for the cluster directory) once filled.
  for (const [dir, mode] of dirModes.reverse()) chmodSync(dir, mode & 0o700);
  chmodSync(path.join(staging, 'pg'), 0o700);
  return manifest;
}

function chownTree(dir: string, ids: { uid: number; gid: number }): void {
  chownSync(dir, ids.uid, ids.gid);
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (lstatSync(p).isDirectory()) chownTree(p, ids);
    else chownSync(p, ids.uid, ids.gid);
  }
}

/**
 * Restores an archive into `dataDir`. Everything is unpacked into a new
 * directory inside dataDir, checked (passphrase, every chunk's tag, every
 * file's checksum, the migration level), and the cluster is started there
 * once so PostgreSQL replays the WAL to the backup's end and the result is
 * counted. Only then are the cluster and secrets.json moved into place; on any
 * failure before that, dataDir is left as it was.
 */
export async function restoreEmbedded(opts: RestoreOptions): Promise<RestoreResult> {
  const dataDir = path.resolve(opts.dataDir);
  const pgdata = path.join(dataDir, 'pg');
  const running = readPid(path.join(pgdata, 'postmaster.pid'));
  if (running !== null && processAlive(running)) throw new BackupError(`the embedded database in ${dataDir} is running (pid ${running}): stop the service first`);
  const occupied = existsSync(pgdata) || existsSync(path.join(dataDir, 'secrets.json'));
  if (occupied && !opts.force) throw new BackupError(`${dataDir} already holds an installation (pg/ or secrets.json): restore into an empty DATA_DIR, or give --force to replace it (it is kept aside, renamed)`);
  if (!existsSync(opts.input)) throw new BackupError(`no such file: ${opts.input}`);
  const createdDataDir = !existsSync(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const staging = path.join(dataDir, `.restore-${randomBytes(6).toString('hex')}`);
  mkdirSync(staging, { mode: 0o700 });
  try {
    const manifest = await extract(opts.input, opts.passphrase, staging, opts.knownMigrations);
    const staged = readSecretsFile(staging);
    const ids = runAsIds();
    if (ids) {
      // As root the cluster runs as the postgres user (embedded.ts), who must reach it through DATA_DIR.
      chmodSync(dataDir, 0o711);
      chownTree(path.join(staging, 'pg'), ids);
    }
    const cluster = await startEmbeddedPostgres({ dataDir: staging, port: await freePort(), password: staged.password, database: DATABASE, ...(opts.logger ? { logger: opts.logger } : {}) });
    let counts: Record<string, number>;
    try {
      const c = new pg.Client({ connectionString: cluster.url });
      await c.connect();
      try {
        const migrations = await appliedMigrations(c);
        if (migrations.join(',') !== manifest.migrations.join(',')) throw new BackupError('the restored database does not hold the migrations its manifest lists');
        counts = await rowCounts(c);
      } finally {
        await c.end();
      }
    } finally {
      await cluster.stop();
    }
    const replaced: RestoreResult['replaced'] = {};
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    if (existsSync(pgdata)) {
      replaced.pg = `${pgdata}.replaced-${stamp}`;
      renameSync(pgdata, replaced.pg);
    }
    const secretsFile = path.join(dataDir, 'secrets.json');
    if (existsSync(secretsFile)) {
      replaced.secrets = `${secretsFile}.replaced-${stamp}`;
      renameSync(secretsFile, replaced.secrets);
    }
    renameSync(path.join(staging, 'pg'), pgdata);
    renameSync(path.join(staging, 'secrets.json'), secretsFile);
    return { manifest, row_counts: counts, replaced };
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    if (createdDataDir) rmSync(dataDir, { recursive: true, force: true });
    if (err instanceof ArchiveError) throw new BackupError(err.message);
    throw err;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
